#!/usr/bin/env bash
# Tests of scripts/install.sh: bad input is refused with a usage line or the
# failing path; an install has the documented layout; examples/demo.c builds
# against the installed prefix with pkg-config and with a CMake project using
# find_package(unified-runtime), and runs, the installed loader finding the
# adapters installed beside it.
#
# Needs gcc, cmake and pkg-config (scripts/test.sh installs them). Everything
# is written under a temporary folder, removed at the end. The last line is
# `N passed, N failed`; the exit status is non-zero when a test failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
version=0.12.0
libraries=(libur_loader libur_adapter_native_cpu libur_adapter_opencl libur_adapter_cuda libur_adapter_level_zero)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ur-install-test.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
prefix=$tmp/prefix

passed=0
failed=0
# Runs one test: a name, then a command. Its output goes to a log, shown
# (the last lines) when it fails.
run_test() {
  local name=$1 log
  shift
  log=$tmp/log.$((passed + failed))
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "ok    $name"
  else
    failed=$((failed + 1))
    echo "FAIL  $name"
    tail -n 25 "$log" | sed 's/^/      | /'
  fi
}

# Fails with a message naming what is missing.
need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$tool not found (scripts/test.sh installs it)"; return 1; }
  done
}

# The demo's run, with only PREFIX/lib to go on: no forced adapters, no
# search path, nothing of this checkout on the library path. The loader's
# log names each adapter it loads; every one must come from PREFIX/lib.
run_demo() {
  local exe=$1 out
  shift
  out=$(env -u UR_ADAPTERS_FORCE_LOAD -u UR_ADAPTERS_SEARCH_PATH \
    UR_LOG_LOADER="level:info;output:stderr" "$@" "$exe" 2>&1)
  local status=$?
  echo "$out"
  [ "$status" = 0 ] || { echo "the demo exited with $status"; return 1; }
  [[ $out == *"demo passed"* ]] || { echo "no 'demo passed' line"; return 1; }
  [[ $out == *"loaded adapter $prefix/lib/libur_adapter_native_cpu.so.0"* ]] ||
    { echo "the native CPU adapter was not loaded from $prefix/lib"; return 1; }
  if [[ $out == *"loaded adapter $root/"* ]]; then
    echo "an adapter was loaded from the checkout, not from the prefix"
    return 1
  fi
}

# --- bad input ----------------------------------------------------------------

# Runs install.sh expecting a failure before anything is built; the message
# must contain $1.
refused() {
  local expect=$1 out status
  shift
  out=$(bash scripts/install.sh "$@" 2>&1)
  status=$?
  echo "exit $status: $out"
  [ "$status" != 0 ] || { echo "exit status 0"; return 1; }
  [[ $out == *"$expect"* ]] || { echo "the message does not contain: $expect"; return 1; }
  [[ $out != *Compiling* && $out != *building* ]] || { echo "it went on to build"; return 1; }
}

test_no_prefix() {
  refused "usage: install.sh PREFIX"
}

test_prefix_under_a_file() {
  touch "$tmp/a-file"
  refused "$tmp/a-file/prefix" "$tmp/a-file/prefix"
}

test_prefix_unwritable() {
  # Under /proc nothing can be created, even by root.
  refused "/proc/ur-install-test" /proc/ur-install-test
}

# --- an install -----------------------------------------------------------------

test_install() {
  bash scripts/install.sh "$prefix"
}

test_layout() {
  local lib link status=0 target
  for lib in "${libraries[@]}"; do
    if ! [ -f "$prefix/lib/$lib.so.$version" ] || [ -L "$prefix/lib/$lib.so.$version" ]; then
      echo "not a file: $prefix/lib/$lib.so.$version"
      status=1
    fi
    for link in "$lib.so.0" "$lib.so"; do
      target=$(readlink -f "$prefix/lib/$link")
      if ! [ -L "$prefix/lib/$link" ] || [ "$target" != "$prefix/lib/$lib.so.$version" ]; then
        echo "$prefix/lib/$link is not a link to $lib.so.$version (it resolves to '$target')"
        status=1
      fi
    done
  done
  for header in ur_api.h ur_ddi.h; do
    cmp "include/$header" "$prefix/include/unified-runtime/$header" ||
      { echo "$header differs from this project's include/$header"; status=1; }
  done
  for file in pkgconfig/unified-runtime.pc cmake/unified-runtime/unified-runtime-config.cmake \
    cmake/unified-runtime/unified-runtime-config-version.cmake; do
    [ -f "$prefix/lib/$file" ] || { echo "missing: $prefix/lib/$file"; status=1; }
  done
  return $status
}

test_pkg_config() {
  need gcc pkg-config || return 1
  local flags expected="-I$prefix/include/unified-runtime -L$prefix/lib -lur_loader"
  flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs unified-runtime) || return 1
  echo "pkg-config --cflags --libs unified-runtime: $flags"
  # Word splitting of $flags is intended: pkg-config's output is a list of flags.
  # shellcheck disable=SC2206
  local words=($flags)
  [ "${words[*]}" = "$expected" ] || { echo "expected: $expected"; return 1; }
  [ "$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion unified-runtime)" = "$version" ] ||
    { echo "--modversion is not $version"; return 1; }
  gcc -std=c11 -Wall -Wextra -Werror examples/demo.c "${words[@]}" -o "$tmp/demo-pkg-config" || return 1
  run_demo "$tmp/demo-pkg-config" env LD_LIBRARY_PATH="$prefix/lib"
}

# A tiny CMake project around examples/demo.c; $1 is the version it asks for.
cmake_project() {
  local dir=$1 wanted=$2
  mkdir -p "$dir"
  cat >"$dir/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(ur_install_demo C)
find_package(unified-runtime $wanted REQUIRED)
add_executable(demo "$root/examples/demo.c")
set_target_properties(demo PROPERTIES C_STANDARD 11)
target_link_libraries(demo PRIVATE unified-runtime::loader)
EOF
}

test_cmake() {
  need gcc cmake || return 1
  local src=$tmp/cmake-src build=$tmp/cmake-build
  cmake_project "$src" 0.12
  cmake -S "$src" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" || return 1
  cmake --build "$build" || return 1
  # CMake puts PREFIX/lib in the build tree's rpath: no LD_LIBRARY_PATH.
  run_demo "$build/demo" env -u LD_LIBRARY_PATH
}

test_cmake_headers_target() {
  need gcc cmake || return 1
  local src=$tmp/cmake-headers build=$tmp/cmake-headers-build
  mkdir -p "$src"
  printf '#include <ur_api.h>\n#include <ur_ddi.h>\nint main(void) { return UR_RESULT_SUCCESS; }\n' >"$src/main.c"
  cat >"$src/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(ur_install_headers C)
find_package(unified-runtime 0.12.0 EXACT REQUIRED)
add_executable(headers_only main.c)
target_link_libraries(headers_only PRIVATE unified-runtime::headers)
EOF
  cmake -S "$src" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" || return 1
  cmake --build "$build" || return 1
  "$build/headers_only"
}

test_cmake_refuses_other_versions() {
  need cmake || return 1
  local wanted status=0
  for wanted in 0.11 0.13 1.0; do
    cmake_project "$tmp/cmake-v$wanted" "$wanted"
    if cmake -S "$tmp/cmake-v$wanted" -B "$tmp/cmake-v$wanted/build" -DCMAKE_PREFIX_PATH="$prefix"; then
      echo "find_package(unified-runtime $wanted) accepted version $version"
      status=1
    fi
  done
  return $status
}

test_install_again() {
  # Over an existing install: links are replaced, nothing is left half-written.
  bash scripts/install.sh "$prefix" && test_layout
}

run_test "install.sh with no prefix: usage line, non-zero exit" test_no_prefix
run_test "install.sh with a prefix under a regular file: names the path, non-zero exit" test_prefix_under_a_file
run_test "install.sh with an unwritable prefix (/proc/...): names the path, non-zero exit" test_prefix_unwritable
run_test "install.sh PREFIX (builds, installs)" test_install
run_test "layout: lib/*.so.$version with .so.0 and .so links, the project's headers, .pc, CMake files" test_layout
run_test "examples/demo.c with pkg-config --cflags --libs unified-runtime, run with LD_LIBRARY_PATH" test_pkg_config
run_test "examples/demo.c with find_package(unified-runtime) and unified-runtime::loader, run by rpath" test_cmake
run_test "unified-runtime::headers alone, find_package(... 0.12.0 EXACT)" test_cmake_headers_target
run_test "find_package(unified-runtime 0.11 / 0.13 / 1.0) is refused" test_cmake_refuses_other_versions
run_test "install.sh over an existing install" test_install_again

echo
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
