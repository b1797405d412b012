#!/usr/bin/env bash
# Installs the real Intel clients our adapters are tested under, into
# .deps/sycl/ (gitignored). Idempotent; needs pip and the package registry
# the first time only.
#
#   PyPI intel-sycl-rt      libsycl.so.9 (SYCL runtime with a UR 0.12 loader
#                           inside) and its headers (include/sycl, ...)
#   PyPI intel-cmplr-lib-ur libur_loader.so.0, Intel's standalone UR loader
#                           (in ur/, with:)
#   PyPI intel-cmplr-lib-rt libsvml, libimf, libirng, libintlc: what Intel's
#                           standalone loader links against
#
# Only what `ldd` shows to be needed is unpacked (the wheels also hold a
# 250 MB JIT library and Level Zero adapters that host-only SYCL programs
# never load); the script ends by checking with ldd that nothing is missing.
# scripts/sycl_env.sh sets the environment that uses this folder.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

version=2026.2.0
deps=.deps
prefix=$deps/sycl
stamp=$prefix/.installed-$version

check_links() {
  local lib status=0
  # No LD_LIBRARY_PATH: both libraries find their dependencies beside
  # themselves (RUNPATH $ORIGIN) or in the system.
  for lib in "$prefix/lib/libsycl.so.9" "$prefix/ur/libur_loader.so.0"; do
    [ -f "$lib" ] || { echo "install_sycl: $lib missing" >&2; status=1; continue; }
    if env -u LD_LIBRARY_PATH ldd "$lib" | grep "not found" >&2; then
      echo "install_sycl: $lib has unresolved dependencies (above)" >&2
      status=1
    fi
  done
  [ -f "$prefix/include/sycl/sycl.hpp" ] || { echo "install_sycl: sycl.hpp missing" >&2; status=1; }
  return $status
}

if [ -f "$stamp" ] && check_links 2>/dev/null; then
  echo "install_sycl: present in $prefix"
  exit 0
fi

# One wheel per package, downloaded once into .deps/ (scripts/fetch_reference.sh
# keeps the intel-sycl-rt wheel there too, so it is not fetched twice).
wheel_of() {
  local package=$1 stem=${1//-/_}
  local wheel
  wheel=$(first_existing "$deps/$stem-$version"-*.whl || true)
  if [ -z "$wheel" ]; then
    echo "install_sycl: pip download $package==$version" >&2
    python3 -m pip download --quiet --disable-pip-version-check --no-deps \
      --only-binary=:all: --dest "$deps" "$package==$version" >&2
    wheel=$(first_existing "$deps/$stem-$version"-*.whl) ||
      { echo "install_sycl: pip downloaded no $stem-$version wheel into $deps" >&2; return 1; }
  fi
  echo "$wheel"
}

mkdir -p "$deps"
sycl_wheel=$(wheel_of intel-sycl-rt)
ur_wheel=$(wheel_of intel-cmplr-lib-ur)
rt_wheel=$(wheel_of intel-cmplr-lib-rt)

# Unpack into a scratch folder and move it into place at the end, so that an
# interrupted run never leaves a half-filled prefix that looks complete.
scratch=$(mktemp -d "$deps/sycl-unpack.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# A wheel is a zip; files sit under <name>.data/data/{lib,include}/. Symbolic
# links are stored as full copies, so each name that is linked against is
# taken as its own file. libsycl goes to lib/, Intel's loader and the
# compiler runtime it links against to ur/: a separate folder, so that
# putting lib/ on LD_LIBRARY_PATH never makes Intel's libur_loader.so.0
# shadow ours.
python3 - "$scratch" "$sycl_wheel" "$ur_wheel" "$rt_wheel" <<'PY'
import os, shutil, sys, zipfile

scratch, sycl_wheel, ur_wheel, rt_wheel = sys.argv[1:]
wanted_libs = {
    sycl_wheel: ("lib", {"libsycl.so.9"}),
    ur_wheel: ("ur", {"libur_loader.so.0"}),
    rt_wheel: ("ur", {"libsvml.so", "libimf.so", "libirng.so", "libintlc.so.5"}),
}
for wheel, (folder, names) in wanted_libs.items():
    found = set()
    with zipfile.ZipFile(wheel) as z:
        for member in z.namelist():
            if member.endswith("/") or "/data/" not in member:
                continue
            rel = member.split("/data/", 1)[1]
            take_lib = rel.startswith("lib/") and rel[4:] in names
            take_include = wheel == sycl_wheel and rel.startswith("include/")
            if not (take_lib or take_include):
                continue
            dest = os.path.join(scratch, folder, rel[4:]) if take_lib else os.path.join(scratch, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with z.open(member) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out)
            if take_lib:
                os.chmod(dest, 0o755)
                found.add(rel[4:])
    missing = names - found
    if missing:
        sys.exit(f"install_sycl: {os.path.basename(wheel)} lacks {sorted(missing)}")
PY
# The linker's name for libsycl, so that `-lsycl` works as well as
# `-l:libsycl.so.9`.
ln -sf libsycl.so.9 "$scratch/lib/libsycl.so"
chmod 755 "$scratch"
rm -rf "$prefix"
mv "$scratch" "$prefix"
trap - EXIT
check_links
touch "$stamp"
echo "install_sycl: installed in $prefix: $(cd "$prefix" && echo lib/* ur/*)"
