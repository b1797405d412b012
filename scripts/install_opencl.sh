#!/usr/bin/env bash
# Installs the two real OpenCL runtimes the OpenCL adapter is tested on, and
# the tools that compile OpenCL C test kernels to SPIR-V. Idempotent; needs
# root (apt-get) and the package registries.
#
#   PoCL (Debian pocl-opencl-icd): CPU device, SVM, no USM extension.
#   Intel's CPU runtime (PyPI intel-opencl-rt): USM extension, SPIR-V.
#
# Both are reached through the ocl-icd loader and a project-local vendors
# folder, .deps/ocl-vendors/, with one .icd file per runtime; see
# scripts/opencl_env.sh for the environment that selects it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
root=$PWD
deps=$root/.deps
intel=$deps/intel-ocl
vendors=$deps/ocl-vendors

# Debian: ICD loader, PoCL, clinfo, and clang + llvm-spirv of one LLVM version.
apt_install_missing ocl-icd-libopencl1 pocl-opencl-icd clinfo clang-14 llvm-spirv-14

# PyPI: Intel's OpenCL CPU runtime and the libraries it loads, in a prefix of
# our own so nothing outside the checkout changes.
intel_version=2026.2.0
if ! [ -f "$intel/.installed-$intel_version" ] || ! [ -f "$intel/lib/libintelocl.so" ]; then
  echo "install_opencl: pip install intel-opencl-rt==$intel_version into $intel"
  rm -rf "$intel"
  # --prefix, not --target: these wheels keep their libraries in the data
  # scheme (<prefix>/lib), which --target drops.
  python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --root-user-action=ignore --prefix "$intel" "intel-opencl-rt==$intel_version" "intel-cmplr-lib-rt==$intel_version" tbb
  touch "$intel/.installed-$intel_version"
fi

libintelocl=$intel/lib/libintelocl.so
[ -f "$libintelocl" ] || { echo "install_opencl: libintelocl.so not found under $intel" >&2; exit 1; }
# The cache is read whole before it is searched: a reader that stops at the
# first match (awk '{...; exit}', head, grep -m) would leave ldconfig writing
# into a closed pipe, and under pipefail its SIGPIPE (exit 141) would end
# this script at random.
ld_cache=$(ldconfig -p)
libpocl=$(awk '/libpocl\.so\.2 /{print $NF}' <<<"$ld_cache")
libpocl=${libpocl%%$'\n'*}
[ -n "$libpocl" ] || { echo "install_opencl: libpocl.so.2 is not in the linker cache (ldconfig -p) after installing pocl-opencl-icd" >&2; exit 1; }

mkdir -p "$vendors"
echo "$libintelocl" > "$vendors/intel.icd"
echo "$libpocl" > "$vendors/pocl.icd"
echo "install_opencl: vendors in $vendors: $(cat "$vendors"/*.icd | tr '\n' ' ')"
