#!/usr/bin/env bash
# A real SYCL client that runs kernels and oneMKL on our adapters: test files
# of dpnp's own suite (PyPI dpnp 0.20.0 on Intel's libsycl.so.9, installed
# by scripts/install_dpnp.sh), run on our OpenCL adapter and on Intel's
# stack, and compared test by test, as tests/dpctl/run.sh does for dpctl.
#
#   tests/dpnp/run.sh [FILE...]
#
#   FILE     a test file inside dpnp/tests (default: the six below); one
#            pytest run per file and stack, so each has its own time and
#            results.
#
# Both runs are on Intel's OpenCL CPU runtime alone (OPENCL_VENDOR=intel,
# scripts/opencl_env.sh) with ONEAPI_DEVICE_SELECTOR=opencl:cpu: Intel's
# stack (libsycl's built-in OpenCL adapter, no UR_ADAPTERS_FORCE_LOAD), then
# ours (UR_ADAPTERS_FORCE_LOAD=target/release/libur_adapter_opencl.so.0).
# PoCL and native CPU are left out: dpnp needs the USM extension, which PoCL
# lacks, and its kernels ship as spir64 images only. Every test that passes
# on Intel's stack must pass on ours, and no test may abort or time out on
# ours; exceptions, with their reason, are listed in
# tests/dpnp/known_differences.txt (label opencl-intel).
#
# Environment:
#   DPNP_TEST_TIMEOUT  pytest-timeout's limit per test, seconds (default 120:
#                      some of test_linalg's run for seconds on 2 cores)
#   DPNP_K             a pytest -k expression applied to every file
#   DPNP_STACKS        which stacks to run, "intel ours" by default; with
#                      "ours", the Intel stack's results of an earlier run in
#                      build/dpnp/ are the reference (they only change with
#                      the packages; same FILEs and DPNP_K, or tests go
#                      missing)
#   DPNP_MAX_RESTARTS  pytest processes started again after an abort, per
#                      file and stack (default 100); past that the tests not
#                      run yet are missing, and so fail the comparison
#
# A test that aborts the process (std::terminate, a crash) or hangs is
# recorded as abort or timeout and pytest starts again after it
# (tests/dpnp/suite.py, which reuses tests/dpctl's recorder and comparison).
# Results are kept in build/dpnp/: <stack>/<file>.tsv (test, outcome,
# reason), .tsv.log (pytest's output), .tsv.seconds; <stack>.probe.
#
# The last line is `N passed, N failed` (one check per test compared, one per
# stack that must use the intended adapter); the exit status is non-zero when
# a check failed. Build first (scripts/build.sh).
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
# The arguments are files, not differential.sh's targets: it is given the
# one target run here (for here, out, the adapters' paths, pass and fail).
files=("$@")
set -- intel
# shellcheck source=../differential.sh
source "$root/tests/differential.sh"
[ ${#files[@]} -gt 0 ] || files=(
  test_sycl_queue.py
  test_usm_type.py
  test_fill.py
  test_linalg.py
  test_manipulation.py
  tensor/test_usm_ndarray_ctor.py
)
known=$here/known_differences.txt
test_timeout=${DPNP_TEST_TIMEOUT:-120}
kexpr=${DPNP_K:-}
stacks=${DPNP_STACKS:-intel ours}
max_restarts=${DPNP_MAX_RESTARTS:-100}
venv=$root/.deps/dpnp-venv
py=$venv/bin/python
ref=intel-stack-opencl-intel
ours=ours-opencl-intel
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
  exit
}

bash "$root/scripts/install_dpnp.sh" >/dev/null || { fail "scripts/install_dpnp.sh"; finish; }
bash "$root/scripts/install_opencl.sh" >/dev/null || { fail "scripts/install_opencl.sh"; finish; }
[ -e "$opencl_adapter" ] || { fail "$opencl_adapter missing: run scripts/build.sh first"; finish; }
mkdir -p "$out/$ref" "$out/$ours"
start_s=$SECONDS

# run_in <adapter|-> command...: the command in a clean environment: Intel's
# OpenCL CPU runtime alone, its CPU device selected, only that adapter forced
# (Intel's stack for -), nothing else of the caller's SYCL or UR settings,
# and no LD_LIBRARY_PATH (through which libsycl could find our adapters by
# name).
run_in() {
  local adapter=$1
  shift
  (
    unset UR_ADAPTERS_FORCE_LOAD ONEAPI_DEVICE_SELECTOR SYCL_UR_TRACE SYCL_DEVICE_FILTER LD_LIBRARY_PATH OCL_ICD_VENDORS
    export OPENCL_VENDOR=intel
    # shellcheck source=../../scripts/opencl_env.sh
    source "$root/scripts/opencl_env.sh"
    # Intel's CPU runtime also shows an FPGA emulator device where its .icd
    # is found; the CPU device is the one compared.
    export ONEAPI_DEVICE_SELECTOR=opencl:cpu
    [ "$adapter" = - ] || export UR_ADAPTERS_FORCE_LOAD=$adapter
    "$@"
  )
}

# probe <label> <adapter|->: the run uses the intended adapter (ours loaded,
# alone; or, for Intel's stack, none of ours), its default device is an
# OpenCL CPU, and the process maps Intel's CPU runtime of
# scripts/install_opencl.sh (not the copy in the venv) through the system's
# ICD loader (not Intel's: scripts/install_dpnp.sh removes it); prints the
# platform's name.
probe() {
  local label=$1 adapter=$2 trace loaded platform
  trace=$(run_in "$adapter" env SYCL_UR_TRACE=1 "$py" -c '
import dpctl
d = dpctl.SyclDevice()
print("platform:", d.sycl_platform.name, "/", d.backend.name, d.device_type.name)
for path in sorted({line.split()[-1] for line in open("/proc/self/maps") if "/" in line}):
    if "libOpenCL" in path or "libintelocl" in path:
        print("mapped:", path)' 2>&1)
  loaded=$(grep -E '^<LOADER>\[INFO\]: loaded adapter ' <<<"$trace")
  platform=$(sed -n 's/^platform: //p' <<<"$trace")
  printf '%s\n' "$trace" >"$out/$label.probe"
  if [ -z "$platform" ]; then
    fail "$label: no default device; see $out/$label.probe"
  elif [ "$platform" = "${platform%/ opencl cpu}" ]; then
    fail "$label: the default device is not an OpenCL CPU ($platform); see $out/$label.probe"
  elif [ "$adapter" != - ] && { [ "$(grep -c 'loaded adapter ' <<<"$loaded")" != 1 ] || ! grep -qF "($adapter)" <<<"$loaded"; }; then
    fail "$label: libsycl did not load exactly $adapter; see $out/$label.probe"
  elif [ "$adapter" = - ] && grep -qF "$root/target/" <<<"$loaded"; then
    fail "$label: Intel's stack loaded one of our adapters; see $out/$label.probe"
  elif ! grep -qxF "mapped: $root/.deps/intel-ocl/lib/libintelocl.so" <<<"$trace" ||
    [[ $(grep -E '^mapped: .*libOpenCL' <<<"$trace") == *"$venv/"* ]]; then
    fail "$label: not Intel's CPU runtime of .deps/intel-ocl through the system's ICD loader; see $out/$label.probe"
  else
    pass
    echo "$label: platform $platform"
  fi
}

# name <file>: the file's results' name, test_x.py -> test_x,
# tensor/test_y.py -> tensor_test_y.
name() {
  local n=${1%.py}
  echo "${n//\//_}"
}

# suite <label> <adapter|-> <file>: one file; build/dpnp/<label>/<name>.tsv.
suite() {
  local label=$1 adapter=$2 file=$3
  run_in "$adapter" "$py" "$here/suite.py" run "$out/$label/$(name "$file").tsv" --file "$file" \
    --timeout "$test_timeout" -k "$kexpr" --max-restarts "$max_restarts" ||
    fail "$label: tests/dpnp/suite.py run $file"
}

# compare <file>: counts the checks.
compare() {
  local n result summary
  n=$(name "$1")
  if ! [ -f "$out/$ref/$n.tsv" ] || ! [ -f "$out/$ours/$n.tsv" ]; then
    fail "$1: no results of both stacks in $out"
    return
  fi
  result=$("$py" "$here/suite.py" compare "$out/$ref/$n.tsv" "$out/$ours/$n.tsv" "$known" opencl-intel)
  printf '%s\n' "$result"
  summary=$(grep -E '^compare ' <<<"$result")
  if [[ $summary =~ :\ ([0-9]+)\ checked,\ ([0-9]+)\ failed ]]; then
    passed=$((passed + BASH_REMATCH[1] - BASH_REMATCH[2]))
    failed=$((failed + BASH_REMATCH[2]))
  else
    fail "$1: tests/dpnp/suite.py compare gave no summary"
  fi
}

if [[ " $stacks " == *" intel "* ]]; then
  probe "$ref" -
  for f in "${files[@]}"; do suite "$ref" - "$f"; done
fi
if [[ " $stacks " == *" ours "* ]]; then
  probe "$ours" "$opencl_adapter"
  for f in "${files[@]}"; do suite "$ours" "$opencl_adapter" "$f"; done
fi

echo
echo "--- comparisons (tests/dpnp/known_differences.txt lists the exceptions)"
for f in "${files[@]}"; do
  compare "$f"
done

names=()
ours_runs=()
for f in "${files[@]}"; do
  names+=("$(name "$f")")
  [ -f "$out/$ours/$(name "$f").tsv" ] && ours_runs+=("$out/$ours/$(name "$f").tsv")
done
echo
echo "--- per file (failed counts errors; skipped, xfails; aborts, timeouts)"
"$py" "$here/suite.py" summary "$out/$ref" "$out/$ours" "${names[@]}"
if [ ${#ours_runs[@]} -gt 0 ]; then
  echo
  echo "--- what fails on ours, by reason"
  "$py" "$here/suite.py" reasons "${ours_runs[@]}" --top 10
fi
echo "dpnp suite: $((SECONDS - start_s)) s"
finish
