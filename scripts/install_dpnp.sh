#!/usr/bin/env bash
# Installs dpnp (NumPy on SYCL), a real Python client of Intel's SYCL runtime
# that, unlike dpctl, runs kernels and oneMKL on the device, with its own
# tests, into the virtual environment .deps/dpnp-venv/ (gitignored):
# tests/dpnp/run.sh runs some of those tests on our OpenCL adapter and on
# Intel's stack. Idempotent; needs pip and the package registry the first
# time only (about 3 GB, most of it oneMKL).
#
#   PyPI dpnp 0.20.0         the library; its tests ship inside the wheel
#                            (dpnp/tests, with dpnp/tests/tensor for the
#                            array library that moved there from dpctl)
#   PyPI dpctl 0.22.1        the SYCL bindings dpnp is built on
#   PyPI intel-sycl-rt,      libsycl.so.9 and its UR loader (as for dpctl),
#   intel-cmplr-lib-rt,      the compiler runtime, and dpcpp-cpp-rt, the
#   intel-cmplr-lib-ur,      package dpnp names for all of them
#   dpcpp-cpp-rt 2026.2.0
#   PyPI mkl, onemkl-sycl-*  oneMKL and its SYCL interfaces (BLAS, LAPACK,
#   2026.2.0                 DFT, RNG, VM), which dpnp calls; with their
#                            own dependencies intel-openmp, tbb, tcmlib, umf
#   PyPI intel-opencl-rt     a dependency of dpcpp-cpp-rt and of oneMKL; see
#                            below for the one file of it that is removed
#   numpy, pytest, pytest-timeout (a hang in one test must not stop a run)
#
# Every package is pinned, the dependencies too (what pip resolved for the
# ones above when this was written), so that a rerun installs the same set.
#
# intel-opencl-rt puts Intel's own OpenCL ICD loader in the venv's lib/, the
# folder of libsycl.so.9, whose RUNPATH is $ORIGIN: libsycl's built-in
# OpenCL adapter would open that loader, which has no RUNPATH of its own and
# so fails to load (libsvml.so not found) unless LD_LIBRARY_PATH names that
# folder. The loader is removed, as the dpctl venv has none: libsycl then
# opens the system's ocl-icd loader, as our adapter does, and
# `source scripts/opencl_env.sh` selects the OpenCL runtime for Intel's stack
# and for ours alike (scripts/install_opencl.sh's, not the copy of Intel's
# CPU runtime that intel-opencl-rt also leaves in the venv, unused).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

venv=.deps/dpnp-venv
requirements=(
  dpnp==0.20.0
  dpctl==0.22.1
  intel-sycl-rt==2026.2.0
  intel-cmplr-lib-rt==2026.2.0
  intel-cmplr-lib-ur==2026.2.0
  intel-cmplr-lic-rt==2026.2.0
  dpcpp-cpp-rt==2026.2.0
  intel-opencl-rt==2026.2.0
  intel-openmp==2026.2.0
  mkl==2026.2.0
  onemkl-sycl-blas==2026.2.0
  onemkl-sycl-dft==2026.2.0
  onemkl-sycl-lapack==2026.2.0
  onemkl-sycl-rng==2026.2.0
  onemkl-sycl-vm==2026.2.0
  tbb==2023.2.0
  tcmlib==1.6.0
  umf==1.2.0
  numpy==2.4.6
  pytest==9.2.0
  pytest-timeout==2.4.0
  iniconfig==2.3.1
  packaging==26.4
  pluggy==1.7.0
  pygments==2.21.0
)
# The stamp names the requirements and this script's own change to the venv
# (the ICD loader removed), so that a change of either makes the venv anew.
stamp=$venv/.installed-$(echo "${requirements[*]} no-libOpenCL" | md5sum | cut -c1-12)

check() {
  [ -x "$venv/bin/python" ] &&
    ! compgen -G "$venv/lib/libOpenCL.so*" >/dev/null &&
    "$venv/bin/python" -c 'import dpnp, dpnp.tests, dpctl, numpy, pytest, pytest_timeout' 2>/dev/null
}

if [ -f "$stamp" ] && check; then
  echo "install_dpnp: present in $venv"
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
echo "install_dpnp: pip install ${requirements[*]}" >&2
# Wheels that scripts/install_sycl.sh keeps in .deps/ are taken from there.
# Wheels only: nothing here is to be built from source.
if ! "$venv/bin/python" -m pip install --disable-pip-version-check --no-input \
  --only-binary=:all: --find-links .deps "${requirements[@]}" >"$log" 2>&1; then
  echo "install_dpnp: pip install failed; its last lines:" >&2
  tail -n 15 "$log" | sed 's/^/  /' >&2
  exit 1
fi
# Intel's ICD loader out (see above); libOpenCL.so, .so.1 and .so.1.0.0.
rm -f "$venv"/lib/libOpenCL.so*
if ! check; then
  echo "install_dpnp: dpnp, its tests, dpctl, numpy, pytest or pytest-timeout do not import from $venv" >&2
  exit 1
fi
touch "$stamp"
echo "install_dpnp: installed in $venv: $("$venv/bin/python" -c 'import dpnp, dpctl; print("dpnp", dpnp.__version__, "dpctl", dpctl.__version__)')"
