#!/usr/bin/env bash
# Fetches the reference Unified Runtime 0.12 headers that tests/reference_abi.rs
# compares ours with: the PyPI wheel intel-sycl-rt==2026.2.0 ships them under
# include/unified-runtime/. Only the headers are unpacked, into
# .deps/reference/include/unified-runtime/ (gitignored; never committed).
# Idempotent: does nothing when the headers are already there, and does not
# download the wheel again when it is already in .deps/.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

version=2026.2.0
deps=.deps
dest=$deps/reference/include/unified-runtime

if [ -f "$dest/ur_api.h" ] && [ -f "$dest/ur_ddi.h" ]; then
  echo "reference headers present in $dest"
  exit 0
fi

mkdir -p "$deps"
wheel=$(first_existing "$deps"/intel_sycl_rt-"$version"-*.whl || true)
if [ -z "$wheel" ]; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: \
    --dest "$deps" "intel-sycl-rt==$version"
  wheel=$(first_existing "$deps"/intel_sycl_rt-"$version"-*.whl) ||
    { echo "fetch_reference: pip downloaded no intel_sycl_rt-$version wheel into $deps" >&2; exit 1; }
fi

# Unpack into a scratch folder first so that an interrupted run never leaves
# a half-filled $dest behind that the check above would take as complete.
scratch=$(mktemp -d "$deps/unpack.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# A wheel is a zip file; Python reads it, so no unzip tool is needed.
python3 - "$wheel" "$scratch" <<'PY'
import sys, zipfile
wheel, scratch = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    members = [m for m in z.namelist() if "/include/unified-runtime/" in m and not m.endswith("/")]
    z.extractall(scratch, members)
PY
found=$(find "$scratch" -type d -path "*/include/unified-runtime" -print -quit)
[ -n "$found" ] && [ -f "$found/ur_api.h" ] || {
  echo "error: $wheel holds no include/unified-runtime/ur_api.h" >&2
  exit 1
}
mkdir -p "$(dirname "$dest")"
rm -rf "$dest"
mv "$found" "$dest"
echo "reference headers unpacked to $dest"
