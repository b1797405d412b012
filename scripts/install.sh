#!/usr/bin/env bash
# Builds the release libraries (scripts/build.sh) and installs them under
# PREFIX, laid out for C and CMake projects:
#
#   PREFIX/lib/libur_loader.so.0.12.0          and the links .so.0 and .so;
#   PREFIX/lib/libur_adapter_<name>.so.0.12.0  the same for every adapter
#                                              (native_cpu, opencl, cuda, level_zero);
#   PREFIX/include/unified-runtime/ur_api.h, ur_ddi.h   (this project's headers)
#   PREFIX/lib/pkgconfig/unified-runtime.pc
#   PREFIX/lib/cmake/unified-runtime/unified-runtime-config.cmake (+ -version.cmake):
#                                              imported targets unified-runtime::loader
#                                              and unified-runtime::headers
#
# The installed loader finds the adapters installed beside it (it looks in its
# own folder for the default adapter names), so a program needs only
# PREFIX/lib on its library path (or in its rpath).
#
#   bash scripts/install.sh PREFIX
set -euo pipefail

me=$(basename "$0")
usage="usage: $me PREFIX    (builds, then installs the loader, adapters, headers, pkg-config and CMake files under PREFIX)"
VERSION=0.12.0
ADAPTERS=(native_cpu opencl cuda level_zero)

if [ $# != 1 ] || [ -z "$1" ]; then
  echo "$usage" >&2
  exit 2
fi
case $1 in
  -h | --help) echo "$usage"; exit 0 ;;
  -*) echo "$me: unknown option $1" >&2; echo "$usage" >&2; exit 2 ;;
esac

# The prefix, absolute (the .pc file names it). Checked before the build, so
# that a bad prefix fails at once, naming the path that is in the way.
prefix=$1
case $prefix in
  /*) ;;
  *) prefix=$PWD/$prefix ;;
esac
for dir in "$prefix" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/unified-runtime" "$prefix/include/unified-runtime"; do
  if ! error=$(mkdir -p -- "$dir" 2>&1); then
    echo "$me: cannot create $dir: ${error##*: }" >&2
    exit 1
  fi
  if ! [ -w "$dir" ]; then
    echo "$me: cannot write to $dir" >&2
    exit 1
  fi
done

cd "$(dirname "$0")/.."
root=$PWD
echo "$me: building (scripts/build.sh)" >&2
if ! built=$(bash scripts/build.sh); then
  echo "$me: the build failed (scripts/build.sh; cargo's messages are above); nothing installed" >&2
  exit 1
fi
lib_dir=$root/$built

# Copies a file, reporting the destination when it cannot be written.
put() {
  local mode=$1 from=$2 to=$3 error
  if ! error=$(install -m "$mode" -- "$from" "$to" 2>&1); then
    echo "$me: cannot install $to: $error" >&2
    exit 1
  fi
}

# A library under its full version, with the names that loaders (.so.0, the
# SONAME) and linkers (.so) look for.
install_library() {
  local name=$1
  local built=$lib_dir/$name.so
  if ! [ -f "$built" ]; then
    echo "$me: $built is missing after the build" >&2
    exit 1
  fi
  put 755 "$built" "$prefix/lib/$name.so.$VERSION"
  ln -sfn "$name.so.$VERSION" "$prefix/lib/$name.so.0"
  ln -sfn "$name.so.0" "$prefix/lib/$name.so"
}

install_library libur_loader
for adapter in "${ADAPTERS[@]}"; do
  install_library "libur_adapter_$adapter"
done

# The project's own generated headers (include/), never the reference ones.
put 644 include/ur_api.h "$prefix/include/unified-runtime/ur_api.h"
put 644 include/ur_ddi.h "$prefix/include/unified-runtime/ur_ddi.h"

# Written to a temporary file beside the target, then renamed into place.
write_file() {
  local to=$1 tmp
  tmp=$(mktemp "$to.XXXXXX") || { echo "$me: cannot write $to" >&2; exit 1; }
  cat >"$tmp"
  chmod 644 "$tmp"
  mv -f -- "$tmp" "$to"
}

write_file "$prefix/lib/pkgconfig/unified-runtime.pc" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include/unified-runtime

Name: unified-runtime
Description: Unified Runtime $VERSION loader (ur_api.h, libur_loader.so.0); its adapters are installed beside it
URL: https://oneapi-src.github.io/unified-runtime/
Version: $VERSION
Libs: -L\${libdir} -lur_loader
Cflags: -I\${includedir}
EOF

# Relocatable: paths are computed from where the file is.
write_file "$prefix/lib/cmake/unified-runtime/unified-runtime-config.cmake" <<'EOF'
# unified-runtime: the Unified Runtime 0.12 loader and its headers.
#
#   find_package(unified-runtime REQUIRED)
#   target_link_libraries(my_program PRIVATE unified-runtime::loader)
#
# unified-runtime::headers  include/unified-runtime (ur_api.h, ur_ddi.h)
# unified-runtime::loader   libur_loader.so.0, with the headers; the adapters
#                           are installed beside it and found by the loader.
get_filename_component(_unified_runtime_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT TARGET unified-runtime::headers)
  add_library(unified-runtime::headers INTERFACE IMPORTED)
  set_target_properties(unified-runtime::headers PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_unified_runtime_prefix}/include/unified-runtime")
endif()

if(NOT TARGET unified-runtime::loader)
  add_library(unified-runtime::loader SHARED IMPORTED)
  set_target_properties(unified-runtime::loader PROPERTIES
    IMPORTED_LOCATION "${_unified_runtime_prefix}/lib/libur_loader.so.0.12.0"
    IMPORTED_SONAME "libur_loader.so.0"
    INTERFACE_LINK_LIBRARIES unified-runtime::headers)
endif()

set(unified-runtime_INCLUDE_DIR "${_unified_runtime_prefix}/include/unified-runtime")
set(unified-runtime_LIBRARY_DIR "${_unified_runtime_prefix}/lib")
unset(_unified_runtime_prefix)
EOF

write_file "$prefix/lib/cmake/unified-runtime/unified-runtime-config-version.cmake" <<EOF
# Version $VERSION. UR is at major version 0, where each minor version may
# break the ABI: a request for 0.12 or 0.12.0 is met, any other is not.
set(PACKAGE_VERSION "$VERSION")
set(PACKAGE_VERSION_COMPATIBLE FALSE)
set(PACKAGE_VERSION_EXACT FALSE)
if(PACKAGE_FIND_VERSION_MAJOR EQUAL 0 AND PACKAGE_FIND_VERSION_MINOR EQUAL 12
   AND NOT PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
endif()
if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()
if(NOT CMAKE_SIZEOF_VOID_P STREQUAL "" AND NOT CMAKE_SIZEOF_VOID_P EQUAL 8)
  set(PACKAGE_VERSION "$VERSION (64-bit)")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif()
EOF

echo "$me: installed in $prefix" >&2
echo "  libraries: $prefix/lib (libur_loader.so.0 and ${#ADAPTERS[@]} adapters)" >&2
echo "  headers:   $prefix/include/unified-runtime" >&2
echo "  pkg-config: PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs unified-runtime" >&2
echo "  CMake:     -DCMAKE_PREFIX_PATH=$prefix, find_package(unified-runtime), unified-runtime::loader" >&2
echo "$prefix"
