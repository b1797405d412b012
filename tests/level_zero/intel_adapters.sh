#!/usr/bin/env bash
# The cross-check of issue #13: Intel's UR Level Zero adapters (v1 and v2,
# from PyPI intel-cmplr-lib-ur, installed with their dependencies such as
# libumf by scripts/install_dpctl.sh into .deps/dpctl-venv/lib) run through
# our UR loader on the host driver, with scripts/level_zero_env.sh sourced.
# For each adapter: urinfo's exit status, then ur_conformance's PASS/FAIL/SKIP
# counts and exit status (139 is a SIGSEGV). A report, not a gate: it exits 0
# when it could run the programs, whatever they did.
#
#   bash tests/level_zero/intel_adapters.sh
#   ZE_HOST_DRIVER_TRACE=1 bash tests/level_zero/intel_adapters.sh   driver calls on stderr
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
lib=$root/.deps/dpctl-venv/lib
if [ ! -e "$lib/libur_adapter_level_zero_v2.so.0" ]; then
  bash scripts/install_dpctl.sh >/dev/null || { echo "intel_adapters.sh: scripts/install_dpctl.sh failed" >&2; exit 1; }
fi
cargo build --release -p ze_host_driver -p ur_loader -p ur_conformance || exit 1
out=${CARGO_TARGET_DIR:-$root/target}/release
ln -sf libur_loader.so "$out/libur_loader.so.0"
# shellcheck source=../../scripts/level_zero_env.sh
source scripts/level_zero_env.sh

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
for adapter in libur_adapter_level_zero.so.0 libur_adapter_level_zero_v2.so.0; do
  echo "== $adapter"
  UR_ADAPTERS_FORCE_LOAD=$lib/$adapter timeout 120 "$out/urinfo" >"$work/urinfo" 2>&1
  echo "urinfo: exit $?"
  UR_ADAPTERS_FORCE_LOAD=$lib/$adapter timeout 600 "$out/ur_conformance" --loader "$out/libur_loader.so.0" \
    --backend level_zero --isolate --timeout 30 >"$work/conformance" 2>&1
  status=$?
  pass=$(grep -c '^PASS' "$work/conformance")
  fail=$(grep -c '^FAIL' "$work/conformance")
  skip=$(grep -c '^SKIP' "$work/conformance")
  echo "ur_conformance: exit $status, $pass passed, $fail failed, $skip skipped"
done
