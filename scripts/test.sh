#!/usr/bin/env bash
# Runs every test of the project, installing what the tests need first.
#
# Steps run in order and each one is counted; a failing step does not stop
# the later ones, so that one run reports everything. The last line is
# `N passed, N failed` over the steps; the exit status is non-zero when any
# step failed.
#
# Layout: one install function per component, then build, then the test
# steps. A new backend adds its install function and calls it from
# install_all, and adds its test steps to the list at the bottom.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
failed_steps=()

step() {
  local name=$1
  shift
  echo
  echo "=== $name"
  local start=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
    echo "=== $name: ok ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1))
    failed_steps+=("$name")
    echo "=== $name: FAILED ($((SECONDS - start)) s)"
  fi
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

install_all() {
  install_toolchain && install_reference_headers && install_sycl_clients
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

conformance_native_cpu() {
  UR_ADAPTERS_FORCE_LOAD="$PWD/target/release/libur_adapter_native_cpu.so.0" \
    target/release/ur_conformance --backend native_cpu
}

# --- OpenCL adapter ------------------------------------------------------------
# Installs the two OpenCL runtimes (scripts/install_opencl.sh), then runs the
# conformance suite through our loader on each runtime alone (Intel's CPU
# runtime: USM extension and SPIR-V; PoCL: SVM and SPIR binaries), and checks
# that with no OpenCL vendor at all the adapter loads and reports no platform.
conformance_opencl() {
  bash scripts/install_opencl.sh || return 1
  local adapter="$PWD/target/release/libur_adapter_opencl.so.0" status=0 vendor
  for vendor in intel pocl; do
    echo "--- OpenCL runtime: $vendor"
    (
      export OPENCL_VENDOR=$vendor
      source scripts/opencl_env.sh
      UR_ADAPTERS_FORCE_LOAD="$adapter" target/release/ur_conformance --backend opencl
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

conformance_intel_loader_native_cpu() {
  bash tests/intel_loader.sh target/release/libur_adapter_native_cpu.so.0 native_cpu
}

conformance_intel_loader_opencl_on() {
  bash tests/intel_loader.sh target/release/libur_adapter_opencl.so.0 opencl
}

conformance_intel_loader_opencl() {
  for_each_opencl_runtime conformance_intel_loader_opencl_on
}

step "install test dependencies" install_all
step "build (scripts/build.sh)" build
step "cargo test --release --workspace" cargo_tests
step "conformance: native CPU" conformance_native_cpu
step "conformance: OpenCL (Intel CPU runtime, PoCL)" conformance_opencl
step "SYCL suite (Intel's libsycl): native CPU" sycl_native_cpu
step "SYCL suite (Intel's libsycl): OpenCL (Intel CPU runtime, PoCL)" sycl_opencl
step "conformance through Intel's loader: native CPU" conformance_intel_loader_native_cpu
step "conformance through Intel's loader: OpenCL (Intel CPU runtime, PoCL)" conformance_intel_loader_opencl

echo
if [ "$failed" -gt 0 ]; then
  echo "failed steps:"
  printf '  %s\n' "${failed_steps[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
