#!/usr/bin/env bash
# The SYCL suite: host-side SYCL programs run by Intel's libsycl.so.9 on one
# of our adapters.
#
#   tests/sycl/run.sh <adapter .so path> [label]
#
# Builds every tests/sycl/*.cpp with g++ against the headers of the
# intel-sycl-rt wheel (objects cached in build/sycl/), then runs each with
# UR_ADAPTERS_FORCE_LOAD=<adapter> and SYCL_UR_TRACE=-1. Per program it shows
# the program's PASS/FAIL (and SKIP) lines, checks from the trace that libsycl loaded
# exactly our adapter and nothing else, and lists the UR calls that answered
# with an error (expected ones included: the list is for reading). The full
# trace is kept in build/sycl/<label>/<program>.trace.
#
# The backend the programs expect (SYCL_SUITE_BACKEND: native_cpu or opencl)
# comes from the adapter's file name unless set. The environment selecting a
# backend's runtime (e.g. scripts/opencl_env.sh) is the caller's.
#
# Last line: `N passed, N failed` over all checks; a program that crashes,
# times out or exits non-zero without a failed check counts as one failure.
set -uo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 <adapter .so path> [label]" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/../.." && pwd)"
[ -f "$1" ] || { echo "run.sh: no adapter at $1" >&2; exit 2; }
# Absolute, but with the file name as given (libsycl reports the path it
# was given, and a .so.0 link is what users name).
adapter="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
label=${2:-$(basename "$adapter" | sed -e 's/^libur_adapter_//' -e 's/\.so.*$//')}
if [ -z "${SYCL_SUITE_BACKEND:-}" ]; then
  case "$(basename "$adapter")" in
    *native_cpu*) SYCL_SUITE_BACKEND=native_cpu ;;
    *opencl*) SYCL_SUITE_BACKEND=opencl ;;
    *) echo "run.sh: set SYCL_SUITE_BACKEND for $adapter" >&2; exit 2 ;;
  esac
fi
export SYCL_SUITE_BACKEND
timeout_s=${SYCL_SUITE_TIMEOUT:-300}

bash "$root/scripts/install_sycl.sh" >/dev/null || { echo "run.sh: scripts/install_sycl.sh failed" >&2; exit 1; }
# shellcheck source=../../scripts/sycl_env.sh
source "$root/scripts/sycl_env.sh"

# --- build ------------------------------------------------------------------
src=$root/tests/sycl
out=$root/build/sycl
mkdir -p "$out/$label"
cxxflags=(-std=c++17 -O1 -g -Wall -DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING $SYCL_CXXFLAGS)
build_failed=0
programs=()
for cpp in "$src"/*.cpp; do
  name=$(basename "$cpp" .cpp)
  obj=$out/$name.o
  # Rebuilt when the source, the shared header or the flags changed.
  stamp="${cxxflags[*]}"
  if [ ! -f "$obj" ] || [ "$cpp" -nt "$obj" ] || [ "$src/check.hpp" -nt "$obj" ] ||
    [ "$(cat "$obj.flags" 2>/dev/null)" != "$stamp" ]; then
    echo "build: $name.cpp"
    if ! g++ "${cxxflags[@]}" -c "$cpp" -o "$obj"; then
      echo "FAIL build $name.cpp"
      rm -f "$obj"
      build_failed=$((build_failed + 1))
      continue
    fi
    echo "$stamp" > "$obj.flags"
  fi
  if ! g++ "$obj" $SYCL_LDFLAGS -o "$out/$name"; then
    echo "FAIL link $name"
    build_failed=$((build_failed + 1))
    continue
  fi
  programs+=("$name")
done

# --- run --------------------------------------------------------------------
passed=0
failed=$build_failed
echo "SYCL suite on $adapter ($label, backend $SYCL_SUITE_BACKEND)"
for name in "${programs[@]}"; do
  trace=$out/$label/$name.trace
  echo
  echo "--- $name"
  UR_ADAPTERS_FORCE_LOAD="$adapter" SYCL_UR_TRACE=-1 \
    timeout "$timeout_s" "$out/$name" >"$trace" 2>&1
  status=$?
  # The program's own lines; the trace lines all start otherwise.
  grep -E '^(PASS|FAIL|SKIP|  [a-z]+: |[0-9]+ passed, [0-9]+ failed$)' "$trace"
  p=$(grep -c '^PASS ' "$trace")
  f=$(grep -c '^FAIL ' "$trace")

  # libsycl must have loaded our adapter and no other. It also holds an
  # OpenCL adapter of its own, linked in (used without FORCE_LOAD; it logs
  # no "loaded adapter" line), so the adapter count it got from its loader
  # is checked too.
  loaded=$(grep -E '^<LOADER>\[INFO\]: loaded adapter ' "$trace" || true)
  count=$(sed -n -E 's/^ *<--- urAdapterGet\(\.NumEntries = 0, .*\.pNumAdapters = 0x[0-9a-f]+ \(([0-9]+)\)\) -> UR_RESULT_SUCCESS;$/\1/p' "$trace")
  count=${count%%$'\n'*}
  if [ "$(grep -c . <<<"$loaded")" != 1 ] || ! grep -qF "($adapter)" <<<"$loaded" || [ "$count" != 1 ]; then
    echo "FAIL $name: libsycl did not load exactly $adapter (urAdapterGet count: ${count:-none}); it reported:"
    echo "${loaded:-  (no adapter loaded from a file)}"
    f=$((f + 1))
  else
    p=$((p + 1))
    echo "PASS $name: libsycl loaded exactly our adapter"
  fi

  if [ "$status" = 124 ]; then
    echo "FAIL $name: timed out after $timeout_s s (trace: $trace)"
    f=$((f + 1))
  elif [ "$status" != 0 ] && [ "$f" = 0 ]; then
    echo "FAIL $name: exit status $status with no failed check; last lines of $trace:"
    tail -n 5 "$trace" | sed 's/^/  /'
    f=$((f + 1))
  fi

  # Addresses differ from call to call; blank them so equal calls count once.
  errors=$(sed -n -E 's/^ *<--- (ur[A-Za-z0-9]+)\((.*)\) -> (UR_RESULT_ERROR_[A-Z_0-9]+);$/\1 -> \3: \2/p' "$trace" |
    sed -E 's/0x[0-9a-f]+/0x_/g' | sort | uniq -c | sort -rn)
  if [ -n "$errors" ]; then
    echo "UR calls answered with an error (count, call, result, arguments):"
    echo "$errors" | cut -c1-500 | sed 's/^/  /'
  fi
  passed=$((passed + p))
  failed=$((failed + f))
done

echo
echo "SYCL suite on $label:"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
