#!/bin/bash
# Runs on a machine with an NVIDIA GPU, from the repository root, with the
# release build copied into $BIN (default build/device): libur_loader.so.0,
# libur_adapter_cuda.so.0, ur_conformance, urinfo, ur_bench and
# ur_async_alloc (built from bench/ur_async_alloc.c). Builds the raw CUDA
# baselines with nvcc, then runs the conformance suite on the CUDA adapter
# and the benchmarks, and prints the figures side by side. Full logs go to
# $OUT when it is set. SCENARIO5=0 skips scenario 5 (ur_bench and its raw
# replay, mixed_replay.cu); QUICK=1 runs it at 8 MiB only, 20000 allocations.
#
#   scripts: cargo build --release -p ur_loader -p ur_adapter_cuda -p ur_conformance -p ur_bench
#            gcc -O2 -I include adapters/cuda/bench/ur_async_alloc.c \
#                -L target/release -l:libur_loader.so.0 -ldl -Wl,-rpath,'$ORIGIN' -o ur_async_alloc
set -u
BIN=${BIN:-build/device}
OUT=${OUT:-/tmp/cuda-run}
mkdir -p "$OUT"
BYTES=${BYTES:-1048576}
ITERS=${ITERS:-100000}
export LD_LIBRARY_PATH="$PWD/$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export UR_ADAPTERS_FORCE_LOAD="$PWD/$BIN/libur_adapter_cuda.so.0"

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nvcc --version | tail -2 | head -1

echo "== urinfo"
timeout 60 "$BIN/urinfo" 2>&1 | head -20

echo "== conformance (cuda)"
timeout 240 "$BIN/ur_conformance" --loader "$PWD/$BIN/libur_loader.so.0" --backend cuda --timeout 60 \
  >"$OUT/conformance.log" 2>&1
echo "exit status $?"
grep -E '^(FAIL|SKIP)' "$OUT/conformance.log" | cut -c1-300
grep -E 'passed, .* failed' "$OUT/conformance.log"

echo "== benchmark: raw CUDA runtime"
nvcc -O2 -arch=sm_90 -o "$OUT/raw_async_alloc" adapters/cuda/bench/raw_async_alloc.cu -lcuda || exit 1
"$OUT/raw_async_alloc" "$BYTES" "$ITERS" | tee "$OUT/raw.txt"

echo "== the driver's floor for ur_bench scenario 2 (raw memset + copy, no allocator)"
nvcc -O2 -arch=sm_90 -o "$OUT/raw_fill_copy" adapters/cuda/bench/raw_fill_copy.cu -lcuda && "$OUT/raw_fill_copy"

echo "== benchmark: UR (our loader + CUDA adapter)"
timeout 300 "$BIN/ur_async_alloc" "$BYTES" "$ITERS" 2>&1 | tee "$OUT/ur.txt"
echo "exit status ${PIPESTATUS[0]}"

echo "== side by side (ours / raw, same run)"
awk '
  FNR == NR { raw[$1] = $2; next }
  /^#/ { next }
  { ur[$1] = $2 }
  END {
    split("default native engine", pools, " ")
    for (i = 1; i <= 3; i++) {
      p = pools[i]
      k = "ur_" p "_async_pair_us"; if (k in ur) printf "async pair    %-8s %8.3f us  raw %8.3f us  ratio %.2f\n", p, ur[k], raw["raw_async_pair_us"], ur[k] / raw["raw_async_pair_us"]
      k = "ur_" p "_two_queue_iter_us"; if (k in ur) printf "two queues    %-8s %8.3f us  raw %8.3f us  ratio %.2f  blocks %s (raw %s)\n", p, ur[k], raw["raw_two_stream_iter_us"], ur[k] / raw["raw_two_stream_iter_us"], ur["ur_" p "_two_queue_distinct_blocks"], raw["raw_two_stream_distinct_blocks"]
    }
    if ("ur_blocking_pair_us" in ur) printf "blocking pair          %8.3f us  raw %8.3f us  ratio %.2f\n", ur["ur_blocking_pair_us"], raw["raw_blocking_pair_us"], ur["ur_blocking_pair_us"] / raw["raw_blocking_pair_us"]
  }' "$OUT/raw.txt" "$OUT/ur.txt"

if [ "${SCENARIO5:-1}" != 0 ] && [ -x "$BIN/ur_bench" ]; then
  quick=()
  [ "${QUICK:-0}" = 1 ] && quick=(--quick)
  echo "== scenario 5: the same sequences on raw cudaMallocAsync (default pool, release threshold max)"
  "$BIN/ur_bench" "${quick[@]}" --mixed-trace "$OUT/traces" >/dev/null || exit 1
  nvcc -O2 -arch=sm_90 -o "$OUT/mixed_replay" adapters/cuda/bench/mixed_replay.cu || exit 1
  "$OUT/mixed_replay" "$OUT"/traces/mixed-*MiB.txt | tee "$OUT/mixed_raw.txt"
  echo "== scenario 5: ur_bench on the CUDA adapter"
  timeout 600 "$BIN/ur_bench" "${quick[@]}" --loader "$PWD/$BIN/libur_loader.so.0" --device-filter cuda \
    --scenarios 5 --json "$OUT/bench5.json" >"$OUT/bench5.txt" 2>&1
  sed -n '/^device /,$p' "$OUT/bench5.txt"
  echo "== scenario 5 side by side (reserved high / used high)"
  python3 - "$OUT/bench5.json" "$OUT/mixed_raw.txt" <<'PY'
import json, re, sys
rows = json.load(open(sys.argv[1]))["rows"]
raw = dict(l.split() for l in open(sys.argv[2]) if l.strip())
for r in rows:
    m = re.search(r"under (\d+) MiB live, (\d+) allocs", r["name"])
    if not m or r["ours"]["value"] is None or not r["baseline"]["value"]:
        continue
    key = f"raw_mixed-{m.group(1)}MiB"
    ours = r["ours"]["value"] / r["baseline"]["value"]
    print(f"{m.group(1):>4} MiB live, {m.group(2)} allocs: ours {ours:.3f}  raw CUDA {raw.get(key + '_ratio', '?')}"
          f" (to requests {raw.get(key + '_ratio_to_requests', '?')}; after 2000/20000: "
          f"{raw.get(key + '_ratio_after_2000', '-')}/{raw.get(key + '_ratio_after_20000', '-')})")
PY
fi
