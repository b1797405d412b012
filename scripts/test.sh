#!/usr/bin/env bash
# Runs every test of the project, installing what the tests need first.
#
# Steps run in order and each one is counted; a failing step does not stop
# the later ones, so that one run reports everything. The last line is
# `N passed, N failed` over the steps (CI reads it); the line before it sums
# the tests inside the steps (cargo's test results and the suites' own
# `N passed, N failed` lines). The exit status is non-zero when any step
# failed.
#
# Layout: one install function per component, then build, then the test
# steps. A new backend adds its install function and calls it from
# install_all, and adds its test steps to the list at the bottom.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
failed_steps=()
# The tests inside the steps, summed from each step's output (count_tests).
tests_passed=0
tests_failed=0
tests_skipped=0
step_logs=$(mktemp -d)
trap 'rm -rf -- "$step_logs"' EXIT

step() {
  local name=$1 log=$step_logs/step.$((passed + failed)) status counts p f s
  shift
  echo
  echo "=== $name"
  local start=$SECONDS
  # The step's output is shown as it comes and kept, to count its tests.
  # tee reads to the end, so the pipeline cannot end the step early.
  "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  if [ "$status" = 0 ]; then
    passed=$((passed + 1))
    echo "=== $name: ok ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1))
    failed_steps+=("$name")
    echo "=== $name: FAILED ($((SECONDS - start)) s)"
  fi
  counts=$(count_tests "$log")
  read -r p f s <<<"$counts"
  tests_passed=$((tests_passed + p))
  tests_failed=$((tests_failed + f))
  tests_skipped=$((tests_skipped + s))
}

# Prints "passed failed skipped" for the tests in one step's log: cargo's
# `test result:` lines (ignored tests count as skipped), plus each suite's
# final `N passed, N failed[, N skipped]` line. A step may run a suite once
# per OpenCL runtime; the `--- OpenCL runtime:` lines this script prints
# separate those runs, and the last summary line of each run is its total
# (a suite may echo its programs' own summaries before its total).
count_tests() {
  awk '
    /^test result: / { passed += $4; failed += $6; skipped += $8; next }
    /^--- OpenCL runtime: / { if (have) { passed += p; failed += f; skipped += s }; have = 0; next }
    /^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$/ { p = $1; f = $3; s = ($5 == "") ? 0 : $5; have = 1 }
    END { if (have) { passed += p; failed += f; skipped += s }; print passed + 0, failed + 0, skipped + 0 }
  ' "$1"
}

# as_root, apt_install_missing, first_existing; and the rule on pipelines.
source scripts/lib.sh

# --- installs: one function per component -----------------------------------

# Compilers and binutils for the header, reference-ABI and demo tests. A fresh
# machine may have gcc but no g++.
install_toolchain() {
  local missing=()
  command -v gcc >/dev/null || missing+=(gcc)
  command -v g++ >/dev/null || missing+=(g++)
  command -v nm >/dev/null || missing+=(binutils)
  [ ${#missing[@]} = 0 ] || apt_install_missing "${missing[@]}"
}

# The reference UR 0.12 headers (PyPI wheel intel-sycl-rt) in .deps/reference.
install_reference_headers() {
  bash scripts/fetch_reference.sh
}

# OpenCL runtimes (ICD loader, PoCL, Intel's CPU runtime, clang and
# llvm-spirv): installed by conformance_opencl below.

# Level Zero: Debian's loader and headers (libze1, libze-dev); the headers
# serve the bindings' ABI test in the cargo step, python3 its freshness check.
# Other jobs may hold the apt lock for a while: a few tries, then fail.
install_level_zero() {
  local try
  for try in 1 2 3; do
    apt_install_missing libze1 libze-dev python3 && return 0
    sleep 20
  done
  return 1
}

install_all() {
  install_toolchain && install_reference_headers && install_sycl_clients && install_level_zero
}

# --- build ------------------------------------------------------------------

build() {
  bash scripts/build.sh
}

# --- tests ------------------------------------------------------------------

# Release, so that the artifacts of scripts/build.sh serve and the workspace
# is not compiled a second time in another profile. Includes the header,
# reference-ABI, spec and C demo tests of tests/. --no-fail-fast: one failing
# test binary must not hide the results of the others.
cargo_tests() {
  cargo test --release --workspace --no-fail-fast
}

# The same suite with the loader's layers on: it must still pass, and the
# leak checker must find nothing (each case runs in its own child process).
conformance_native_cpu_layers() {
  local err rc
  err=$(mktemp)
  UR_ENABLE_LAYERS="UR_LAYER_LEAK_CHECKING;UR_LAYER_TRACING" UR_LOG_TRACING="output:stdout" \
    conformance_native_cpu 2>"$err" | grep -v '^<TRACING>' | tail -1
  rc=${PIPESTATUS[0]}
  if grep -q 'not released' "$err"; then
    grep -A3 'not released' "$err" | head -20
    rc=1
  fi
  rm -f -- "$err"
  return "$rc"
}

# tests/valgrind.sh: memcheck over the loader and the native CPU adapter (a
# C program's init/teardown cycles and bursts, and the native CPU
# conformance suite); fails on a definite leak or an invalid access in our
# libraries. Installs valgrind itself.
valgrind_native_cpu() {
  bash tests/valgrind.sh
}

# scripts/fuzz.sh: AFL++ (Debian, installed by the script) over UR call
# sequences through the loader and the native CPU adapter, built with
# SanitizerCoverage on stable Rust, for 45 s from fuzz/corpus; fails on any
# crash or hang. The instrumented build lies apart (target/x86_64-*).
fuzz_call_sequences() {
  bash scripts/fuzz.sh 45
}

conformance_native_cpu() {
  UR_ADAPTERS_FORCE_LOAD="$PWD/target/release/libur_adapter_native_cpu.so.0" \
    target/release/ur_conformance --backend native_cpu
}

# --- the installed layout ------------------------------------------------------
# scripts/install.sh PREFIX, then examples/demo.c built against the prefix
# with pkg-config and with a CMake project (find_package), and bad input.
install_packaging_tools() {
  apt_install_missing cmake pkg-config
}

install_layout() {
  install_packaging_tools || return 1
  bash tests/install.sh
}

# --- OpenCL adapter ------------------------------------------------------------
# Installs the two OpenCL runtimes (scripts/install_opencl.sh), then runs the
# conformance suite through our loader on each runtime alone (Intel's CPU
# runtime: USM extension and SPIR-V; PoCL: SVM and SPIR binaries), and checks
# that with no OpenCL vendor at all the adapter loads and reports no platform.
# Runs "$@" with the leak-checking layer on (besides any layer already named
# in UR_ENABLE_LAYERS) and fails when it reports a handle never released.
with_leak_check() {
  local err rc
  err=$(mktemp)
  UR_ENABLE_LAYERS="${UR_ENABLE_LAYERS:+$UR_ENABLE_LAYERS;}UR_LAYER_LEAK_CHECKING" "$@" 2>"$err"
  rc=$?
  cat "$err" >&2
  if grep -q 'not released' "$err"; then
    echo "leak check: handles not released (above)"
    rc=1
  fi
  rm -f -- "$err"
  return "$rc"
}

conformance_opencl() {
  bash scripts/install_opencl.sh || return 1
  local adapter="$PWD/target/release/libur_adapter_opencl.so.0" status=0 vendor
  for vendor in intel pocl; do
    echo "--- OpenCL runtime: $vendor"
    (
      export OPENCL_VENDOR=$vendor
      source scripts/opencl_env.sh
      UR_ADAPTERS_FORCE_LOAD="$adapter" with_leak_check target/release/ur_conformance --backend opencl
    ) || status=1
  done
  echo "--- OpenCL with no vendor: zero platforms"
  local empty report
  empty=$(mktemp -d)
  report=$(OCL_ICD_VENDORS="$empty" UR_ADAPTERS_FORCE_LOAD="$adapter" target/release/urinfo) || status=1
  echo "$report"
  grep -q "no platforms" <<<"$report" || status=1
  rmdir "$empty"
  return $status
}


# --- Intel's clients: libsycl.so.9 and the standalone UR loader ----------------
# scripts/install_sycl.sh puts Intel's libsycl.so.9 (PyPI intel-sycl-rt, with
# its headers) and Intel's standalone libur_loader.so.0 (intel-cmplr-lib-ur)
# in .deps/sycl. The SYCL suite (tests/sycl/run.sh) builds host-side SYCL
# programs with g++ and runs them under libsycl with UR_ADAPTERS_FORCE_LOAD
# naming one of our adapters; tests/intel_loader.sh runs our conformance
# suite through Intel's loader. The OpenCL runs use both runtimes, each alone.
install_sycl_clients() {
  bash scripts/install_sycl.sh
}

sycl_native_cpu() {
  bash tests/sycl/run.sh target/release/libur_adapter_native_cpu.so.0 native_cpu
}

# Runs "$@" once per OpenCL runtime with only that runtime visible.
for_each_opencl_runtime() {
  bash scripts/install_opencl.sh || return 1
  local status=0 vendor
  for vendor in intel pocl; do
    echo "--- OpenCL runtime: $vendor"
    (
      export OPENCL_VENDOR=$vendor
      source scripts/opencl_env.sh
      "$@" "$vendor"
    ) || status=1
  done
  return $status
}

sycl_opencl_on() {
  bash tests/sycl/run.sh target/release/libur_adapter_opencl.so.0 "opencl-$1"
}

sycl_opencl() {
  for_each_opencl_runtime sycl_opencl_on
}

# tests/sycl_info: every SYCL platform, device (sub-devices included) and
# context descriptor, on libsycl's own OpenCL adapter and on ours on the same
# runtime (Intel CPU, PoCL), diffed against a written list of justified
# differences; on native CPU, every descriptor must answer. Installs its
# runtimes itself.
sycl_info_differential() {
  bash tests/sycl_info/run.sh
}

# tests/dpctl: dpctl's own test suite (a Python library on Intel's libsycl),
# on our adapters and on Intel's stack on the same runtime: no test that
# passes there may fail, abort or go unrun on ours but the written
# exceptions. Installs its virtual environment itself (.deps/dpctl-venv).
dpctl_suite() {
  bash tests/dpctl/run.sh
}

# tests/dpnp: six files of dpnp's own suite (NumPy on SYCL: kernels, oneMKL,
# buffers) on our OpenCL adapter against Intel's stack on Intel's CPU
# runtime: no test that passes there may fail, abort or go unrun on ours.
# About 5.5 minutes on two cores; installs .deps/dpnp-venv itself.
dpnp_suite() {
  bash tests/dpnp/run.sh
}

conformance_intel_loader_native_cpu() {
  bash tests/intel_loader.sh target/release/libur_adapter_native_cpu.so.0 native_cpu
}

conformance_intel_loader_opencl_on() {
  bash tests/intel_loader.sh target/release/libur_adapter_opencl.so.0 opencl
}

conformance_intel_loader_opencl() {
  for_each_opencl_runtime conformance_intel_loader_opencl_on
}

# --- multi-device contexts ------------------------------------------------------
# The multi-device cases (conformance/src/cases/multi_device.rs) on platforms
# of two devices: native CPU with UR_NATIVE_CPU_DEVICES=2 and PoCL with
# POCL_DEVICES="pthread pthread". A case that found one device fails the
# step (its skip would hide the feature). On PoCL, with its kernel cache off,
# PoCL's own log must show one compile per two-device build.
multi_device_on() {
  local out
  out=$("$@" --filter multi_device)
  local rc=$?
  echo "$out" | grep -v '^PASS'
  if grep -q 'multi-device cases need two' <<<"$out"; then
    echo "a multi-device case saw one device"
    return 1
  fi
  return $rc
}

conformance_multi_device() {
  bash scripts/install_opencl.sh || return 1
  local status=0 cache log builds compiles
  echo "--- native CPU, two devices"
  UR_NATIVE_CPU_DEVICES=2 UR_ADAPTERS_FORCE_LOAD="$PWD/target/release/libur_adapter_native_cpu.so.0" \
    multi_device_on target/release/ur_conformance --backend native_cpu || status=1
  echo "--- PoCL, two devices"
  cache=$(mktemp -d)
  log=$(mktemp)
  (
    export OPENCL_VENDOR=pocl POCL_DEVICES="pthread pthread"
    source scripts/opencl_env.sh
    POCL_CACHE_DIR="$cache" POCL_KERNEL_CACHE=0 POCL_DEBUG=llvm \
      UR_ADAPTERS_FORCE_LOAD="$PWD/target/release/libur_adapter_opencl.so.0" \
      multi_device_on target/release/ur_conformance --backend opencl
  ) 2>"$log" || status=1
  # Two cases build one program for both devices (one_compile_per_target and
  # the buffer written on the other device), once per ordering of the pair;
  # PoCL writes program.bc once per compile.
  builds=4
  compiles=$(grep -c 'Writing program.bc' "$log")
  echo "PoCL compiles for $builds two-device builds: $compiles"
  [ "$compiles" = "$builds" ] || status=1
  rm -rf -- "$cache" "$log"
  return $status
}

# --- Level Zero: the host driver through Debian's loader ------------------------
# tests/level_zero/run.sh builds drivers/ze_host (libze_host_driver.so) and
# runs a C program on Debian's libze_loader.so.1 with scripts/level_zero_env.sh
# sourced: driver, device, context, the three USM kinds, their properties and
# address ranges, and bad input. Installs libze1 and libze-dev itself.
level_zero_host_driver() {
  install_level_zero || return 1
  bash tests/level_zero/run.sh
}

# --- Level Zero adapter over the host driver -----------------------------------
# Our conformance suite through our loader and through Intel's on
# libur_adapter_level_zero.so.0, Debian's Level Zero loader finding
# drivers/ze_host (scripts/level_zero_env.sh); then, with no driver for the
# loader to find, zero platforms.
conformance_level_zero() {
  install_level_zero || return 1
  cargo build --release -p ze_host_driver -p ur_adapter_level_zero || return 1
  ln -sf libur_adapter_level_zero.so target/release/libur_adapter_level_zero.so.0
  local adapter="$PWD/target/release/libur_adapter_level_zero.so.0" status=0 report
  (
    source scripts/level_zero_env.sh
    UR_ADAPTERS_FORCE_LOAD="$adapter" with_leak_check target/release/ur_conformance --backend level_zero
  ) || status=1
  echo "--- the same through Intel's standalone loader"
  (
    source scripts/level_zero_env.sh
    bash tests/intel_loader.sh "$adapter" level_zero
  ) || status=1
  echo "--- Level Zero with no driver: zero platforms"
  report=$(env -u ZE_ENABLE_ALT_DRIVERS UR_ADAPTERS_FORCE_LOAD="$adapter" target/release/urinfo) || status=1
  echo "$report"
  grep -q "no platforms" <<<"$report" || status=1
  return $status
}

# The lock order of src/engine/LOCKING.md, checked as locks are taken: with
# ur_core's `lock-order` feature (src/lock_order.rs) a thread that waits
# for a ranked lock out of order stops the process, naming both locks, the
# first time the two nest the wrong way (no deadlock needs to happen). Run
# over the engine's own tests (its multi-thread stress tests among them),
# the conformance suite on every CPU backend, and ur_bench's multi-queue
# scenarios (3, 4, 6: two queues, two threads) and SYCL's (7). Its own
# target folder and the dev profile, so the release artifacts stay as built.
lock_order_checked() {
  bash scripts/install_opencl.sh || return 1
  install_level_zero || return 1
  local dir=target/lock-order status=0 lib
  local out=$dir/debug
  CARGO_TARGET_DIR=$dir cargo test -p ur_core --features lock-order --lib || status=1
  CARGO_TARGET_DIR=$dir cargo build --features ur_core/lock-order -p ur_loader -p ur_adapter_native_cpu \
    -p ur_adapter_opencl -p ur_adapter_level_zero -p ur_conformance -p ur_bench || return 1
  for lib in "$out"/libur_loader.so "$out"/libur_adapter_*.so; do
    ln -sf "$(basename "$lib")" "$lib.0"
  done
  checked_conformance() {
    local backend=$1
    shift
    echo "--- conformance, $backend${*:+ ($*)}"
    env "$@" UR_ADAPTERS_FORCE_LOAD="$PWD/$out/libur_adapter_$backend.so.0" \
      "$out/ur_conformance" --backend "$backend" | grep -v '^PASS'
    return "${PIPESTATUS[0]}"
  }
  checked_conformance native_cpu || status=1
  checked_conformance native_cpu UR_NATIVE_CPU_DEVICES=2 || status=1
  (
    export ZE_HOST_DRIVER=$PWD/target/release/libze_host_driver.so
    source scripts/level_zero_env.sh
    checked_conformance level_zero || status=1
    for vendor in intel pocl; do
      (export OPENCL_VENDOR=$vendor; source scripts/opencl_env.sh; checked_conformance opencl OPENCL_VENDOR=$vendor) \
        || status=1
    done
    (export OPENCL_VENDOR=pocl; source scripts/opencl_env.sh; checked_conformance opencl OPENCL_VENDOR=pocl POCL_DEVICES="pthread pthread") \
      || status=1
    source scripts/opencl_env.sh
    echo "--- ur_bench --quick --scenarios 3,4,6,7 (every backend the loader finds)"
    "$out/ur_bench" --quick --scenarios 3,4,6,7 || status=1
    exit $status
  ) || status=1
  return $status
}

step "install test dependencies" install_all
step "build (scripts/build.sh)" build
step "cargo test --release --workspace" cargo_tests
step "conformance: native CPU" conformance_native_cpu
step "conformance: native CPU, leak checking and tracing on" conformance_native_cpu_layers
step "install layout (scripts/install.sh; demo via pkg-config and CMake)" install_layout
step "valgrind: loader and native CPU adapter (tests/valgrind.sh)" valgrind_native_cpu
step "fuzz: UR call sequences, AFL++ (scripts/fuzz.sh)" fuzz_call_sequences
step "conformance: OpenCL (Intel CPU runtime, PoCL)" conformance_opencl
step "conformance: multi-device contexts (native CPU and PoCL, two devices each)" conformance_multi_device
step "SYCL suite (Intel's libsycl): native CPU" sycl_native_cpu
step "SYCL suite (Intel's libsycl): OpenCL (Intel CPU runtime, PoCL)" sycl_opencl
step "SYCL info, ours against Intel's OpenCL adapter on the same runtime (tests/sycl_info)" sycl_info_differential
step "dpctl's test suite, ours against Intel's stack (tests/dpctl)" dpctl_suite
step "dpnp's test files, ours against Intel's stack (tests/dpnp)" dpnp_suite
step "conformance through Intel's loader: native CPU" conformance_intel_loader_native_cpu
step "conformance through Intel's loader: OpenCL (Intel CPU runtime, PoCL)" conformance_intel_loader_opencl
step "Level Zero host driver through Debian's loader (tests/level_zero)" level_zero_host_driver
step "conformance: Level Zero adapter on the host driver" conformance_level_zero
step "lock order checked: engine tests, conformance and ur_bench on every CPU backend" lock_order_checked

echo
if [ "$failed" -gt 0 ]; then
  echo "failed steps:"
  printf '  %s\n' "${failed_steps[@]}"
fi
echo "the tests inside the steps: $tests_passed passed, $tests_failed failed, $tests_skipped skipped or ignored"
echo "the steps (a step fails when a test in it fails or it cannot run), as CI reads them:"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
