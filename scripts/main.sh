#!/usr/bin/env bash
# The main job: build the loader, the adapters and the tools, show what
# Unified Runtime finds on this machine, run the C demo on our loader, and
# run the benchmark on every device beside its baselines.
#
# One line per phase. The optional runtimes (the OpenCL runtimes, Intel's
# libsycl) are installed one by one; one that fails is named with its cause,
# and the job goes on with the devices it has.
set -euo pipefail
cd "$(dirname "$0")/.."
logs=build/logs
mkdir -p "$logs"

phase() { echo; echo "=== $*"; }

# Runs an optional install with its output in a log; on failure says which
# component and why (the log's last lines), and lets the job go on.
optional_install() {
  local what=$1 script=$2 log=$logs/$(basename "$2" .sh).log start=$SECONDS
  echo "--- installing $what ($script; log: $log)"
  if bash "$script" >"$log" 2>&1; then
    echo "    ok ($((SECONDS - start)) s)"
  else
    echo "    $what did NOT install (exit $?); ur_bench reports what needs it as unavailable. Cause, from $log:"
    tail -n 8 "$log" | sed 's/^/    | /'
  fi
}

phase "build (cargo build --release; about a minute here once cargo has downloaded its crates)"
start=$SECONDS
lib=$(bash scripts/build.sh)
echo "    libraries and tools in $lib ($((SECONDS - start)) s)"

phase "optional runtimes, so that urinfo and ur_bench see every device (a first install downloads about 1 GB)"
optional_install "the OpenCL runtimes (PoCL, Intel's CPU runtime)" scripts/install_opencl.sh
optional_install "Intel's libsycl (the SYCL baseline of scenario 7)" scripts/install_sycl.sh
optional_install "Debian's Level Zero loader (for the host driver, level_zero:0)" scripts/install_level_zero.sh
source scripts/opencl_env.sh
source scripts/level_zero_env.sh
export LD_LIBRARY_PATH="$PWD/$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

phase "urinfo: adapters, platforms and devices through our loader"
"$lib/urinfo"

phase "C demo (examples/demo.c against include/ur_api.h)"
mkdir -p target/demo
gcc -std=c11 -Wall -Wextra -I include examples/demo.c \
  -L "$lib" -l:libur_loader.so.0 -o target/demo/demo
target/demo/demo

phase "ur_bench: async allocation on every device, each beside its baseline (see bench/README.md; figures in build/bench.json, chart in build/bench.svg)"
"$lib/ur_bench" --json build/bench.json --plot build/bench.svg
