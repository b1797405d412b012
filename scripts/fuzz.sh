#!/usr/bin/env bash
# Coverage-guided fuzzing of UR call sequences (fuzz/) with AFL++ from Debian,
# on stable Rust: the loader, the native CPU adapter and the harness are built
# with rustc's SanitizerCoverage (trace-pc-guard, what afl-clang-fast emits)
# and the harness links AFL++'s runtime (fuzz/build.rs).
#
#   scripts/fuzz.sh SECONDS [OUTDIR]   fuzz for SECONDS from fuzz/corpus
#
# Fails when AFL++ saved any crash or hang; prints afl-fuzz's totals.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

seconds=${1:-60}
out=${2:-$(mktemp -d)}
command -v afl-fuzz >/dev/null || apt_install_missing afl++
rt=/usr/lib/afl/afl-compiler-rt.o
[ -e "$rt" ] || { echo "fuzz.sh: $rt missing (Debian afl++)" >&2; exit 1; }

# --target keeps RUSTFLAGS off build scripts, and the instrumented build
# apart from the normal one.
target=x86_64-unknown-linux-gnu
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
export RUSTFLAGS="-C passes=sancov-module -C llvm-args=-sanitizer-coverage-level=3 \
-C llvm-args=-sanitizer-coverage-trace-pc-guard -C llvm-args=-sanitizer-coverage-prune-blocks=0 \
-C debug-assertions -C overflow-checks -C link-arg=-Wl,-z,undefs"
export AFL_RT=$rt
cargo build --release --target $target -p ur_loader -p ur_adapter_native_cpu -p ur_fuzz --features ur_fuzz/afl >&2
bin=$CARGO_TARGET_DIR/$target/release
for lib in "$bin"/libur_loader.so "$bin"/libur_adapter_native_cpu.so; do ln -sf "$(basename "$lib")" "$lib.0"; done

export UR_FUZZ_LOADER=$bin/libur_loader.so.0
export UR_ADAPTERS_FORCE_LOAD=$bin/libur_adapter_native_cpu.so.0
# A fresh machine has no core_pattern set for AFL, and CI has no CPU to bind.
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1
export AFL_NO_UI=1 AFL_QUIET=1
# Released handles are fed back in; UR_FUZZ_STALE=0 (passed through) stops that.
mkdir -p "$out"
# -t: a bounded time per input (ms); a hang is saved as a finding.
status=0
afl-fuzz -i fuzz/corpus -o "$out" -t 2000 -V "$seconds" -- "$bin/ur_fuzz_seq" >"$out/afl.log" 2>&1 || status=$?
stats=$out/default/fuzzer_stats
if [ ! -e "$stats" ]; then
  echo "fuzz.sh: afl-fuzz did not start (exit $status); its last lines:" >&2
  tail -n 30 "$out/afl.log" >&2
  exit 1
fi
grep -E '^(execs_done|execs_per_sec|corpus_count|saved_crashes|saved_hangs|bitmap_cvg|edges_found|total_edges|stability) ' "$stats"
crashes=$(find "$out/default/crashes" "$out/default/hangs" -type f ! -name README.txt | wc -l)
if [ "$crashes" != 0 ]; then
  echo "fuzz.sh: $crashes crash or hang inputs in $out/default/{crashes,hangs}; reproduce with:" >&2
  echo "  UR_ADAPTERS_FORCE_LOAD=$UR_ADAPTERS_FORCE_LOAD UR_FUZZ_LOADER=$UR_FUZZ_LOADER $bin/ur_fuzz_seq FILE" >&2
  exit 1
fi
echo "fuzz.sh: no crash, no hang"
