#!/usr/bin/env bash
# Runs our conformance suite through Intel's standalone UR loader
# (libur_loader.so.0 of PyPI intel-cmplr-lib-ur, installed by
# scripts/install_sycl.sh), with one of our adapters forced in:
#
#   tests/intel_loader.sh <adapter .so path> <backend> [ur_conformance args]
#
# This checks the adapter ABI from the other side: Intel's loader finds our
# urGet*ProcAddrTable exports, dispatches on our handles and tears us down.
#
# Two cases are not run here, because they test code that lives inside the
# loader (not the adapter), and Intel's loader answers differently from the
# reference header it ships; our loader follows the header:
#   urLoaderConfigGetInfo.size_protocol: a propSize larger than needed is
#     INVALID_SIZE in Intel's loader; the header asks for INVALID_SIZE only
#     when propSize is smaller than needed.
#   urDeviceGetSelected.invalid_value: NumEntries 0 with an output array is
#     INVALID_SIZE in Intel's loader; the header says INVALID_VALUE.
# They are printed, never silently dropped. The environment selecting a
# backend's runtime (e.g. scripts/opencl_env.sh) is the caller's.
set -uo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 <adapter .so path> <backend> [ur_conformance args]" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
[ -f "$1" ] || { echo "intel_loader.sh: no adapter at $1" >&2; exit 2; }
adapter="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
backend=$2
shift 2

bash "$root/scripts/install_sycl.sh" >/dev/null || { echo "intel_loader.sh: scripts/install_sycl.sh failed" >&2; exit 1; }
# shellcheck source=../scripts/sycl_env.sh
source "$root/scripts/sycl_env.sh"
conformance=$root/target/release/ur_conformance
[ -x "$conformance" ] || { echo "intel_loader.sh: build first ($conformance missing)" >&2; exit 1; }

not_here=(urLoaderConfigGetInfo.size_protocol urDeviceGetSelected.invalid_value)
# ur_conformance selects cases by substring (--filter, repeatable), so every
# other case is named in full. A kept name that is part of a left-out one
# would bring it back; refuse rather than run it unknowingly.
mapfile -t all < <("$conformance" --list | awk '{print $1}')
[ ${#all[@]} -gt 0 ] || { echo "intel_loader.sh: ur_conformance --list gave no cases" >&2; exit 1; }
filters=()
for name in "${all[@]}"; do
  skip=0
  for left in "${not_here[@]}"; do
    [ "$name" = "$left" ] && skip=1
    if [ "$skip" = 0 ] && [[ "$left" == *"$name"* ]]; then
      echo "intel_loader.sh: case '$name' would also select '$left'" >&2
      exit 1
    fi
  done
  [ "$skip" = 1 ] || filters+=(--filter "$name")
done
echo "Intel's loader: $INTEL_UR_LOADER"
echo "adapter: $adapter"
echo "not run through Intel's loader (they test the loader, see tests/intel_loader.sh): ${not_here[*]}"
UR_ADAPTERS_FORCE_LOAD="$adapter" "$conformance" --loader "$INTEL_UR_LOADER" --backend "$backend" "${filters[@]}" "$@"
