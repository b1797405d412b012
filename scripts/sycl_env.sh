# Sourced by scripts that run SYCL programs or Intel's standalone UR loader
# on this project's adapters (installed by scripts/install_sycl.sh):
#
#   source scripts/sycl_env.sh
#   g++ -std=c++17 $SYCL_CXXFLAGS prog.cpp $SYCL_LDFLAGS -o prog
#   UR_ADAPTERS_FORCE_LOAD=$PWD/target/release/libur_adapter_native_cpu.so.0 ./prog
#
# Sets SYCL_ROOT (.deps/sycl), SYCL_CXXFLAGS, SYCL_LDFLAGS, INTEL_UR_LOADER
# (Intel's standalone libur_loader.so.0) and puts the folder of libsycl.so.9
# on LD_LIBRARY_PATH. Intel's loader finds its own dependencies beside itself
# (.deps/sycl/ur, RUNPATH $ORIGIN); that folder is deliberately not on the
# path, so our libur_loader.so.0 is never shadowed by Intel's.
SYCL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.deps/sycl"
export SYCL_ROOT
export INTEL_UR_LOADER="$SYCL_ROOT/ur/libur_loader.so.0"
# -isystem: the SYCL headers are a third party's; their warnings are not ours.
export SYCL_CXXFLAGS="-isystem $SYCL_ROOT/include"
export SYCL_LDFLAGS="-L$SYCL_ROOT/lib -l:libsycl.so.9"
export LD_LIBRARY_PATH="$SYCL_ROOT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
