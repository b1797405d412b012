#!/usr/bin/env bash
# Installs dpctl, a real Python client of Intel's SYCL runtime, with its own
# test suite, into the virtual environment .deps/dpctl-venv/ (gitignored):
# tests/dpctl/run.sh runs that suite on our adapters and on Intel's stack.
# Idempotent; needs pip and the package registry the first time only.
#
#   PyPI dpctl 0.22.1        the library; its tests ship inside the wheel
#                            (dpctl/tests, run as `pytest --pyargs dpctl`)
#   PyPI intel-sycl-rt       libsycl.so.9 with its UR loader, Intel's built-in
#   2026.2.0                 OpenCL adapter and Level Zero adapters (in the
#                            venv's lib/), which dpctl links against
#   PyPI intel-cmplr-lib-rt, the compiler runtime libsycl links against
#   intel-cmplr-lib-ur
#   numpy, pytest, pytest-timeout (a hang in one test must not stop a run)
#
# The venv holds no libOpenCL.so.1: libsycl's built-in OpenCL adapter opens
# the system's ICD loader, so `source scripts/opencl_env.sh` selects the
# OpenCL runtime for Intel's stack and for ours alike.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

venv=.deps/dpctl-venv
requirements=(
  dpctl==0.22.1
  intel-sycl-rt==2026.2.0
  intel-cmplr-lib-rt==2026.2.0
  intel-cmplr-lib-ur==2026.2.0
  numpy==2.4.6
  pytest==9.2.0
  pytest-timeout==2.4.0
)
stamp=$venv/.installed-$(echo "${requirements[*]}" | md5sum | cut -c1-12)

check() {
  [ -x "$venv/bin/python" ] &&
    "$venv/bin/python" -c 'import dpctl, dpctl.tests, numpy, pytest, pytest_timeout' 2>/dev/null
}

if [ -f "$stamp" ] && check; then
  echo "install_dpctl: present in $venv"
  exit 0
fi

# A venv left half made (an interrupted run, other requirements) is made anew.
rm -rf "$venv"
mkdir -p .deps
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  apt_install_missing python3-venv
fi
python3 -m venv "$venv"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "install_dpctl: pip install ${requirements[*]}" >&2
# Wheels that scripts/install_sycl.sh keeps in .deps/ are taken from there.
if ! "$venv/bin/python" -m pip install --disable-pip-version-check --no-input \
  --only-binary=dpctl,intel-sycl-rt,intel-cmplr-lib-rt,intel-cmplr-lib-ur,numpy \
  --find-links .deps "${requirements[@]}" >"$log" 2>&1; then
  echo "install_dpctl: pip install failed; its last lines:" >&2
  tail -n 15 "$log" | sed 's/^/  /' >&2
  exit 1
fi
if ! check; then
  echo "install_dpctl: dpctl, its tests, numpy, pytest or pytest-timeout do not import from $venv" >&2
  exit 1
fi
touch "$stamp"
echo "install_dpctl: installed in $venv: $("$venv/bin/python" -c 'import dpctl; print("dpctl", dpctl.__version__)')"
