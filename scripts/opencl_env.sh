# Sourced by scripts that run the OpenCL adapter on this project's runtimes
# (installed by scripts/install_opencl.sh): the ocl-icd loader reads the
# vendors folder named here instead of /etc/OpenCL/vendors, so exactly
# PoCL and Intel's CPU runtime are found.
#
#   source scripts/opencl_env.sh          both runtimes
#   OPENCL_VENDOR=pocl source ...         only one (pocl or intel)
_ocl_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -n "${OPENCL_VENDOR:-}" ]; then
  # ocl-icd takes a single .icd file in place of a folder.
  export OCL_ICD_VENDORS="$_ocl_root/.deps/ocl-vendors/$OPENCL_VENDOR.icd"
else
  export OCL_ICD_VENDORS="$_ocl_root/.deps/ocl-vendors"
fi
# No LD_LIBRARY_PATH: libintelocl.so finds TBB and its compiler runtime
# beside itself ($ORIGIN RUNPATH), and that folder also holds Intel's own
# libOpenCL.so.1, which must not shadow the ocl-icd loader.
unset _ocl_root
