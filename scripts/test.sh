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

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    as_root apt-get update -qq || return 1
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "$@"
}

# --- installs: one function per component -----------------------------------

# Compilers and binutils for the header, reference-ABI and demo tests. A fresh
# machine may have gcc but no g++.
install_toolchain() {
  local missing=()
  command -v gcc >/dev/null || missing+=(gcc)
  command -v g++ >/dev/null || missing+=(g++)
  command -v nm >/dev/null || missing+=(binutils)
  [ ${#missing[@]} = 0 ] || apt_install "${missing[@]}"
}

# The reference UR 0.12 headers (PyPI wheel intel-sycl-rt) in .deps/reference.
install_reference_headers() {
  bash scripts/fetch_reference.sh
}

# OpenCL runtimes (ICD loader, PoCL, Intel's CPU runtime): added with the
# OpenCL adapter's tests.

install_all() {
  install_toolchain && install_reference_headers
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

step "install test dependencies" install_all
step "build (scripts/build.sh)" build
step "cargo test --release --workspace" cargo_tests
step "conformance: native CPU" conformance_native_cpu

echo
if [ "$failed" -gt 0 ]; then
  echo "failed steps:"
  printf '  %s\n' "${failed_steps[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
