#!/usr/bin/env bash
# The main job: build the loader, the adapters and the tools, show what
# Unified Runtime finds on this machine, run the C demo on our loader, and
# run the benchmark on every device beside its baselines.
set -euo pipefail
cd "$(dirname "$0")/.."

lib=$(bash scripts/build.sh | tail -n 1)

# The OpenCL runtimes (PoCL, Intel's CPU runtime) and Intel's libsycl, so that
# urinfo and the benchmark see every device and the SYCL baseline.
{ bash scripts/install_opencl.sh && bash scripts/install_sycl.sh; } >/dev/null ||
  echo "(the OpenCL runtimes or libsycl did not install: ur_bench reports what needs them as unavailable)"
source scripts/opencl_env.sh
export LD_LIBRARY_PATH="$PWD/$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

echo "=== urinfo: adapters, platforms and devices through our loader"
"$lib/urinfo"

echo
echo "=== C demo (examples/demo.c against include/ur_api.h)"
mkdir -p target/demo
gcc -std=c11 -Wall -Wextra -I include examples/demo.c \
  -L "$lib" -l:libur_loader.so.0 -o target/demo/demo
target/demo/demo

# === benchmarks: added here (async pool engine against its baseline).
echo
echo "=== ur_bench: async allocation on every device, each beside its baseline (build/bench.json, build/bench.svg)"
mkdir -p build && "$lib/ur_bench" --json build/bench.json --plot build/bench.svg
