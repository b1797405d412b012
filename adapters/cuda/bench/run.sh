#!/bin/bash
# Runs on a machine with an NVIDIA GPU, from the repository root, with the
# release build copied into $BIN (default build/device): libur_loader.so.0,
# libur_adapter_cuda.so.0, ur_conformance, urinfo and ur_async_alloc (built
# from bench/ur_async_alloc.c). Builds the raw CUDA baseline with nvcc, then
# runs the conformance suite on the CUDA adapter and both benchmarks, and
# prints the figures side by side. Full logs go to $OUT when it is set.
#
#   scripts: cargo build --release -p ur_loader -p ur_adapter_cuda -p ur_conformance
#            gcc -O2 -I include adapters/cuda/bench/ur_async_alloc.c \
#                -L target/release -l:libur_loader.so.0 -Wl,-rpath,'$ORIGIN' -o ur_async_alloc
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
