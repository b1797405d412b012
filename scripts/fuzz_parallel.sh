#!/usr/bin/env bash
# Runs N afl-fuzz instances (one main, N-1 secondaries) of a prebuilt pack of
# the instrumented harness, loader and native CPU adapter for SECONDS, then
# prints every instance's totals and the sum of executions. For long runs on
# a machine with more cores; scripts/fuzz.sh builds what goes in the pack.
#
#   scripts/fuzz_parallel.sh PACK N SECONDS OUTDIR
set -uo pipefail
cd "$(dirname "$0")/.."
pack=$(cd "$1" && pwd) n=$2 seconds=$3 out=$4
ln -sf libur_loader.so "$pack/libur_loader.so.0"
ln -sf libur_adapter_native_cpu.so "$pack/libur_adapter_native_cpu.so.0"
export LD_LIBRARY_PATH=$pack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export UR_FUZZ_LOADER=$pack/libur_loader.so.0 UR_ADAPTERS_FORCE_LOAD=$pack/libur_adapter_native_cpu.so.0
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 AFL_NO_UI=1 AFL_QUIET=1
afl=$(command -v afl-fuzz || echo "$pack/afl-fuzz")
mkdir -p "$out"
pids=()
for i in $(seq 0 $((n - 1))); do
  role=-S; [ "$i" = 0 ] && role=-M
  "$afl" -i fuzz/corpus -o "$out" $role "f$i" -t 2000 -V "$seconds" -- "$pack/ur_fuzz_seq" >"$out/f$i.log" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
total=0 crashes=0
for s in "$out"/f*/fuzzer_stats; do
  e=$(awk '$1 == "execs_done" { print $3 }' "$s")
  total=$((total + e))
  echo "$(basename "$(dirname "$s")"): $(grep -E '^(execs_done|saved_crashes|saved_hangs|edges_found) ' "$s" | awk '{printf "%s=%s ", $1, $3}')"
done
crashes=$(find "$out"/f*/crashes "$out"/f*/hangs -type f ! -name README.txt 2>/dev/null | wc -l)
echo "total executions: $total; crash and hang inputs: $crashes"
[ "$crashes" = 0 ]
