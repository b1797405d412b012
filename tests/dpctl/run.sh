#!/usr/bin/env bash
# A real SYCL client on our adapters: dpctl's own test suite (PyPI dpctl
# 0.22.1 on Intel's libsycl.so.9, installed by scripts/install_dpctl.sh),
# run on our adapters and on Intel's stack, and compared test by test.
#
#   tests/dpctl/run.sh [intel] [pocl] [native_cpu]     (default: all three)
#
#   intel, pocl   OpenCL on that runtime alone (OPENCL_VENDOR=...,
#                 scripts/opencl_env.sh): Intel's stack (libsycl's built-in
#                 OpenCL adapter, no UR_ADAPTERS_FORCE_LOAD), then ours
#                 (UR_ADAPTERS_FORCE_LOAD=target/release/libur_adapter_opencl.so.0).
#                 Every test that passes on Intel's stack must pass on ours;
#                 a skip on ours fails too (same device: a skip means a
#                 capability we lack).
#   native_cpu    UR_ADAPTERS_FORCE_LOAD=target/release/libur_adapter_native_cpu.so.0,
#                 compared with Intel's stack on the same CPU through Intel's
#                 OpenCL CPU runtime (there is no Intel native CPU adapter
#                 here). Skips are accepted: dpctl has no native CPU backend,
#                 so its tests of OpenCL filters skip.
#   On ours, no test may abort or time out, whatever Intel's stack does.
#
# The whole suite runs (about 3300 tests, under half a minute a run; a test
# that hangs is ended by pytest-timeout after DPCTL_TEST_TIMEOUT seconds,
# default 60). A test that aborts the process (std::terminate, a crash) or
# hangs is recorded as abort or timeout and pytest starts again after it
# (tests/dpctl/suite.py). Exceptions, with their reason, are listed in
# tests/dpctl/known_differences.txt. Results are kept in build/dpctl/:
# <run>.tsv (test, outcome, reason), <run>.tsv.log (pytest's output).
#
# The last line is `N passed, N failed` (one check per test compared, and
# one per run that must use the intended adapter); the exit status is
# non-zero when a check failed. Build first (scripts/build.sh).
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck source=../differential.sh
source "$root/tests/differential.sh"
known=$here/known_differences.txt
test_timeout=${DPCTL_TEST_TIMEOUT:-60}
venv=$root/.deps/dpctl-venv
py=$venv/bin/python
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
  exit
}

bash "$root/scripts/install_dpctl.sh" >/dev/null || { fail "scripts/install_dpctl.sh"; finish; }
# Intel's OpenCL CPU runtime is the reference for native CPU too.
bash "$root/scripts/install_opencl.sh" >/dev/null || { fail "scripts/install_opencl.sh"; finish; }
for lib in "$opencl_adapter" "$native_cpu_adapter"; do
  [ -e "$lib" ] || { fail "$lib missing: run scripts/build.sh first"; finish; }
done
mkdir -p "$out"
start_s=$SECONDS

# run_in <vendor|-> <adapter|-> command...: the command in a clean
# environment: only that OpenCL runtime visible (none for -), only that
# adapter forced (Intel's stack for -), nothing of the caller's SYCL or UR
# settings, and no LD_LIBRARY_PATH (through which libsycl could find our
# adapters by name).
run_in() {
  local vendor=$1 adapter=$2
  shift 2
  (
    unset UR_ADAPTERS_FORCE_LOAD ONEAPI_DEVICE_SELECTOR SYCL_UR_TRACE SYCL_DEVICE_FILTER LD_LIBRARY_PATH OCL_ICD_VENDORS
    if [ "$vendor" != - ]; then
      export OPENCL_VENDOR=$vendor
      # shellcheck source=../../scripts/opencl_env.sh
      source "$root/scripts/opencl_env.sh"
    fi
    [ "$adapter" = - ] || export UR_ADAPTERS_FORCE_LOAD=$adapter
    "$@"
  )
}

# probe <label> <vendor|-> <adapter|->: the run uses the intended adapter (ours
# loaded, alone; or, for Intel's stack, none of ours) and has a default
# device; prints that device's platform name.
probe() {
  local label=$1 vendor=$2 adapter=$3 trace loaded platform
  trace=$(run_in "$vendor" "$adapter" env SYCL_UR_TRACE=1 "$py" -c \
    'import dpctl; print("platform:", dpctl.SyclDevice().sycl_platform.name)' 2>&1)
  loaded=$(grep -E '^<LOADER>\[INFO\]: loaded adapter ' <<<"$trace")
  platform=$(sed -n 's/^platform: //p' <<<"$trace")
  if [ -z "$platform" ]; then
    fail "$label: no default device; see $out/$label.probe"
  elif [ "$adapter" != - ] && { [ "$(grep -c 'loaded adapter ' <<<"$loaded")" != 1 ] || ! grep -qF "($adapter)" <<<"$loaded"; }; then
    fail "$label: libsycl did not load exactly $adapter; see $out/$label.probe"
  elif [ "$adapter" = - ] && grep -qF "$root/target/" <<<"$loaded"; then
    fail "$label: Intel's stack loaded one of our adapters; see $out/$label.probe"
  else
    pass
    echo "$label: platform $platform"
  fi
  printf '%s\n' "$trace" >"$out/$label.probe"
}

# suite <label> <vendor|-> <adapter|->: dpctl's suite; build/dpctl/<label>.tsv.
suite() {
  local label=$1 vendor=$2 adapter=$3
  probe "$label" "$vendor" "$adapter"
  run_in "$vendor" "$adapter" "$py" "$here/suite.py" run "$out/$label.tsv" --timeout "$test_timeout" ||
    fail "$label: tests/dpctl/suite.py run"
}

# compare <ref> <ours> <label> [--allow-skips]: counts the checks.
compare() {
  local result summary
  result=$("$py" "$here/suite.py" compare "$out/$1.tsv" "$out/$2.tsv" "$known" "$3" "${@:4}")
  printf '%s\n' "$result"
  summary=$(grep -E '^compare ' <<<"$result")
  if [[ $summary =~ :\ ([0-9]+)\ checked,\ ([0-9]+)\ failed ]]; then
    passed=$((passed + BASH_REMATCH[1] - BASH_REMATCH[2]))
    failed=$((failed + BASH_REMATCH[2]))
  else
    fail "$3: tests/dpctl/suite.py compare gave no summary"
  fi
}

if wants intel || wants native_cpu; then
  suite intel-stack-opencl-intel intel -
fi
if wants intel; then
  suite ours-opencl-intel intel "$opencl_adapter"
fi
if wants pocl; then
  suite intel-stack-opencl-pocl pocl -
  suite ours-opencl-pocl pocl "$opencl_adapter"
fi
if wants native_cpu; then
  suite ours-native_cpu - "$native_cpu_adapter"
fi

echo
echo "--- comparisons (tests/dpctl/known_differences.txt lists the exceptions)"
if wants intel; then
  compare intel-stack-opencl-intel ours-opencl-intel opencl-intel
fi
if wants pocl; then
  compare intel-stack-opencl-pocl ours-opencl-pocl opencl-pocl
fi
if wants native_cpu; then
  compare intel-stack-opencl-intel ours-native_cpu native_cpu --allow-skips
fi
echo "dpctl suite: $((SECONDS - start_s)) s"
finish
