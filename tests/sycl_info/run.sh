#!/usr/bin/env bash
# The differential info test: every platform, device and context descriptor
# of Intel's libsycl.so.9 (tests/sycl_info/info.cpp), asked of Intel's own
# OpenCL adapter and of ours on the same OpenCL runtime, and asked of our
# native CPU adapter.
#
#   tests/sycl_info/run.sh [intel] [pocl] [native_cpu]     (default: all three)
#
# OpenCL, per runtime (each alone, OPENCL_VENDOR=intel or pocl):
#   (a) libsycl's built-in OpenCL adapter: no UR_ADAPTERS_FORCE_LOAD,
#       ONEAPI_DEVICE_SELECTOR=opencl:*; the trace must show that libsycl
#       loaded no adapter file and got exactly one adapter, of the OpenCL
#       backend;
#   (b) ours: UR_ADAPTERS_FORCE_LOAD=target/release/libur_adapter_opencl.so.0,
#       same selector; the trace must show exactly that file loaded.
#   Both outputs are compared line by line (one check per descriptor), and
#   so are the urDeviceGetInfo / urPlatformGetInfo / urContextGetInfo answers
#   in the two UR traces (one check per query both runs made): Intel's
#   adapter answering where ours fails, or both answering differently, is a
#   difference; ours answering where Intel's answers an error is not.
# Native CPU (no Intel counterpart): no descriptor may answer EXCEPTION.
#
# Differences allowed, and exceptions allowed on native CPU, are listed with
# their reason in tests/sycl_info/justified_differences.txt; anything else
# fails. For the aspects list, the aspects whose has() difference is
# justified are taken out of both lists before they are compared.
#
# Outputs and traces are kept in build/sycl_info/<runtime>/. The last line is
# `N passed, N failed`; the exit status is non-zero when a check failed.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck source=../differential.sh
source "$root/tests/differential.sh"
justified_file=$here/justified_differences.txt
timeout_s=${SYCL_INFO_TIMEOUT:-300}

bash "$root/scripts/install_sycl.sh" >/dev/null || { echo "run.sh: scripts/install_sycl.sh failed" >&2; exit 1; }
# shellcheck source=../../scripts/sycl_env.sh
source "$root/scripts/sycl_env.sh"
if wants intel || wants pocl; then
  bash "$root/scripts/install_opencl.sh" >/dev/null || { echo "run.sh: scripts/install_opencl.sh failed" >&2; exit 1; }
fi

# --- build (object cached like tests/sycl) ------------------------------------
mkdir -p "$out"
read -ra sycl_cxxflags <<<"$SYCL_CXXFLAGS"
cxxflags=(-std=c++17 -O1 -Wall -DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING "${sycl_cxxflags[@]}")
obj=$out/info.o
stamp="${cxxflags[*]}"
if [ ! -f "$obj" ] || [ "$here/info.cpp" -nt "$obj" ] || [ "$(cat "$obj.flags" 2>/dev/null)" != "$stamp" ]; then
  echo "build: info.cpp"
  if ! g++ "${cxxflags[@]}" -c "$here/info.cpp" -o "$obj"; then
    rm -f "$obj"
    fail "build info.cpp"
    echo "$passed passed, $failed failed"
    exit 1
  fi
  echo "$stamp" >"$obj.flags"
fi
if ! g++ "$obj" $SYCL_LDFLAGS -o "$out/info"; then
  fail "link info"
  echo "$passed passed, $failed failed"
  exit 1
fi
pass

# --- the justified list --------------------------------------------------------
# Lines `scope | name | reason`; scope is opencl (both runtimes), opencl:intel,
# opencl:pocl or native_cpu (an EXCEPTION allowed there).
declare -A justified=() used=()
while IFS= read -r l; do
  [[ $l =~ ^[[:space:]]*(#|$) ]] && continue
  scope=$(sed -E 's/^ *([^|]*[^| ]) *\|.*/\1/' <<<"$l")
  name=$(sed -E 's/^[^|]*\| *([^|]*[^| ]) *\|.*/\1/' <<<"$l")
  justified["$scope|$name"]=1
done <"$justified_file"

# is_justified <runtime> <name>: listed for this runtime or all of OpenCL.
is_justified() {
  local key
  for key in "opencl:$1|$2" "opencl|$2" "$1|$2"; do
    if [ -n "${justified[$key]:-}" ]; then
      used[$key]=1
      return 0
    fi
  done
  return 1
}

# run_info <dir> <label> [VAR=value...]: runs the program under that
# environment with the UR trace on; <dir>/<label>.txt gets the program's own
# lines, .trace the whole output, .err its stderr.
run_info() {
  local dir=$1 label=$2
  shift 2
  # Nothing of the caller's adapter choice leaks in: only what is named.
  env -u UR_ADAPTERS_FORCE_LOAD -u ONEAPI_DEVICE_SELECTOR "$@" SYCL_UR_TRACE=-1 timeout "$timeout_s" "$out/info" >"$dir/$label.trace" 2>"$dir/$label.err"
  local status=$?
  grep -E '^(platforms|devices) = |^\[(platform|device) [0-9]+\]' "$dir/$label.trace" >"$dir/$label.txt"
  if [ "$status" != 0 ]; then
    fail "$label: exit status $status (trace: $dir/$label.trace); last lines:"
    tail -n 5 "$dir/$label.err" "$dir/$label.trace" | sed 's/^/  /'
    return 1
  fi
  pass
}

# The adapter count libsycl got from its loader, and the adapter files it loaded.
adapter_count() {
  sed -n -E 's/^ *<--- urAdapterGet\(\.NumEntries = 0, .*\.pNumAdapters = 0x[0-9a-f]+ \(([0-9]+)\)\) -> UR_RESULT_SUCCESS;$/\1/p' "$1" | head -n 1
}
loaded_files() {
  { grep -E '^<LOADER>\[INFO\]: loaded adapter ' "$1.trace" "$1.err" -h || true; grep -h '^adapter library: ' "$1.err" || true; }
}

# check_ours <dir/label> <adapter>: exactly our adapter file was used.
check_ours() {
  local base=$1 adapter=$2 loaded count
  loaded=$(loaded_files "$base")
  count=$(adapter_count "$base.trace")
  if [ "$count" = 1 ] && [ "$(grep -c 'loaded adapter ' <<<"$loaded")" = 1 ] &&
    grep -qF "($adapter)" <<<"$loaded" && [ "$(grep -c '^adapter library: ' <<<"$loaded")" = 1 ] &&
    grep -qF "adapter library: $adapter" <<<"$loaded"; then
    pass
  else
    fail "$(basename "$base"): libsycl did not use exactly $adapter (adapter count ${count:-none}); it reported:"
    echo "${loaded:-  (no adapter file)}" | sed 's/^/  /'
  fi
}

# check_builtin <dir/label>: libsycl's own OpenCL adapter, no adapter file.
check_builtin() {
  local base=$1 loaded count
  loaded=$(loaded_files "$base")
  count=$(adapter_count "$base.trace")
  if [ "$count" = 1 ] && [ -z "$loaded" ] &&
    grep -qE 'urAdapterGetInfo\(.*UR_ADAPTER_INFO_BACKEND.*\(UR_BACKEND_OPENCL\)' "$base.trace"; then
    pass
  else
    fail "$(basename "$base"): not libsycl's built-in OpenCL adapter alone (adapter count ${count:-none}); loaded files:"
    echo "${loaded:-  (none)}" | sed 's/^/  /'
  fi
}

# The descriptor name of an output line: without the [platform N] /
# [device N] / [context ...] prefix and the value.
descriptor() { sed -E 's/^(\[[^]]*\])+ //; s/ = .*$//' <<<"$1"; }

# For two list values ({a, b, ...}), the elements only one of them has.
list_difference() {
  [[ $1 == \{* && $2 == \{* ]] || return 0
  local a b
  a=$(sed -E 's/^\{//; s/\}$//; s/, /\n/g' <<<"$1" | sort)
  b=$(sed -E 's/^\{//; s/\}$//; s/, /\n/g' <<<"$2" | sort)
  echo "    only Intel's adapter: $(comm -23 <(echo "$a") <(echo "$b") | paste -sd ' ')"
  echo "    only ours:            $(comm -13 <(echo "$a") <(echo "$b") | paste -sd ' ')"
}

# compare_outputs <runtime> <ref.txt> <ours.txt>
compare_outputs() {
  local runtime=$1 ref=$2 ours=$3 key name
  declare -A r=() o=() seen=()
  local keys=()
  while IFS= read -r line; do
    key=${line%% = *}
    r[$key]=${line#* = }
    keys+=("$key")
  done <"$ref"
  while IFS= read -r line; do
    key=${line%% = *}
    o[$key]=${line#* = }
    [ -n "${r[$key]+x}" ] || keys+=("$key")
  done <"$ours"
  # Aspects whose difference is justified leave the aspects list.
  local drop=()
  for key in "${keys[@]}"; do
    if [[ $key =~ has\(aspect::([a-z0-9_]+)\)$ ]] && [ "${r[$key]:-}" != "${o[$key]:-}" ] &&
      is_justified "$runtime" "$(descriptor "$key")"; then
      drop+=("${BASH_REMATCH[1]}")
    fi
  done
  strip_aspects() {
    local v=$1 a
    for a in "${drop[@]}"; do
      v=$(sed -E "s/([{ ])$a(, |})/\1\2/; s/\{, /{/; s/, , /, /; s/, \}/}/" <<<"$v")
    done
    echo "$v"
  }
  for key in "${keys[@]}"; do
    [ -z "${seen[$key]:-}" ] || continue
    seen[$key]=1
    name=$(descriptor "$key")
    local rv=${r[$key]-<missing>} ov=${o[$key]-<missing>}
    if [ "$name" = "sycl::info::device::aspects" ] && [ ${#drop[@]} -gt 0 ]; then
      rv=$(strip_aspects "$rv")
      ov=$(strip_aspects "$ov")
    fi
    if [ "$rv" = "$ov" ]; then
      pass
    elif is_justified "$runtime" "$name"; then
      pass
      echo "justified: $key"
      echo "    Intel's adapter: ${r[$key]-<missing>}" | cut -c1-300
      echo "    ours:            ${o[$key]-<missing>}" | cut -c1-300
    else
      fail "$key differs"
      echo "    Intel's adapter: ${r[$key]-<missing>}" | cut -c1-400
      echo "    ours:            ${o[$key]-<missing>}" | cut -c1-400
      list_difference "$rv" "$ov"
    fi
  done
}

# The info answers of a trace, one line per distinct answer: the query name,
# then the call with handles and addresses blanked and its result.
ur_answers() {
  sed -n -E 's/^ *<--- ur(Device|Platform|Context)GetInfo\(\.h[A-Za-z]+ = 0x[0-9a-f]+, \.propName = ([A-Z0-9_]+), (.*)\) -> (UR_RESULT_[A-Z_0-9]+);$/\2 \3 -> \4/p' "$1" |
    sed -E 's/0x[0-9a-f]+/0x_/g' | sort -u
}

# compare_ur <runtime> <ref.trace> <ours.trace>
compare_ur() {
  local runtime=$1 prop
  declare -A r=() o=()
  while IFS= read -r line; do
    prop=${line%% *}
    r[$prop]+="${line#* }"$'\n'
  done < <(ur_answers "$2")
  while IFS= read -r line; do
    prop=${line%% *}
    o[$prop]+="${line#* }"$'\n'
  done < <(ur_answers "$3")
  local ours_only=()
  for prop in $(printf '%s\n' "${!r[@]}" | sort); do
    # A query only one run made follows from an earlier answer; that answer
    # is compared where both made it.
    [ -n "${o[$prop]+x}" ] || continue
    if [ "${r[$prop]}" = "${o[$prop]}" ]; then
      pass
    elif ! grep -q -- '-> UR_RESULT_SUCCESS' <<<"${r[$prop]}" && ! grep -qv -- '-> UR_RESULT_SUCCESS' <<<"${o[$prop]%$'\n'}"; then
      # Intel's adapter has no answer; ours has one.
      pass
      ours_only+=("$prop")
    elif is_justified "$runtime" "$prop"; then
      pass
      echo "justified: UR answer to $prop"
    else
      fail "UR answer to $prop differs"
      sed 's/^/    Intel'"'"'s adapter: /' <<<"${r[$prop]%$'\n'}" | cut -c1-400
      sed 's/^/    ours:            /' <<<"${o[$prop]%$'\n'}" | cut -c1-400
    fi
  done
  [ ${#ours_only[@]} = 0 ] || echo "answered by ours only (Intel's adapter: an error): ${ours_only[*]}"
}

# --- OpenCL: Intel's built-in adapter against ours ------------------------------
for runtime in intel pocl; do
  wants "$runtime" || continue
  echo
  echo "--- OpenCL on $runtime: Intel's built-in adapter against ours"
  dir=$out/$runtime
  mkdir -p "$dir"
  if [ ! -f "$root/.deps/ocl-vendors/$runtime.icd" ]; then
    fail "$runtime: no .deps/ocl-vendors/$runtime.icd (scripts/install_opencl.sh)"
    continue
  fi
  # The environment of scripts/opencl_env.sh for this runtime alone.
  vendors=$(export OPENCL_VENDOR=$runtime && source "$root/scripts/opencl_env.sh" && echo "$OCL_ICD_VENDORS")
  run_info "$dir" intel_adapter OCL_ICD_VENDORS="$vendors" ONEAPI_DEVICE_SELECTOR='opencl:*'
  run_info "$dir" our_adapter OCL_ICD_VENDORS="$vendors" ONEAPI_DEVICE_SELECTOR='opencl:*' \
    UR_ADAPTERS_FORCE_LOAD="$opencl_adapter"
  check_builtin "$dir/intel_adapter"
  check_ours "$dir/our_adapter" "$opencl_adapter"
  if ! grep -q '^\[device 0\] ' "$dir/intel_adapter.txt"; then
    fail "$runtime: Intel's adapter found no device"
    continue
  fi
  before=$failed
  compare_outputs "$runtime" "$dir/intel_adapter.txt" "$dir/our_adapter.txt"
  compare_ur "$runtime" "$dir/intel_adapter.trace" "$dir/our_adapter.trace"
  echo "OpenCL on $runtime: $((failed - before)) differences not justified"
done

# --- native CPU: every descriptor answers ----------------------------------------
if wants "native_cpu"; then
  echo
  echo "--- native CPU: every descriptor answers"
  dir=$out/native_cpu
  mkdir -p "$dir"
  if run_info "$dir" our_adapter UR_ADAPTERS_FORCE_LOAD="$native_cpu_adapter"; then
    check_ours "$dir/our_adapter" "$native_cpu_adapter"
    grep -q '^\[device 0\] ' "$dir/our_adapter.txt" && pass || fail "native CPU: no device"
    exceptions=0
    while IFS= read -r line; do
      key=${line%% = *}
      name=$(descriptor "$key")
      if [[ ${line#* = } != EXCEPTION* ]]; then
        pass
      elif is_justified native_cpu "$name"; then
        pass
        exceptions=$((exceptions + 1))
      else
        fail "native CPU: $line"
        exceptions=$((exceptions + 1))
      fi
    done <"$dir/our_adapter.txt"
    echo "native CPU: $exceptions descriptors answered with an exception"
  fi
fi

# Justified entries that this run did not need: the list should shrink.
for key in "${!justified[@]}"; do
  scope=${key%%|*}
  case $scope in
    opencl) wants intel && wants pocl || continue ;;
    opencl:*) wants "${scope#opencl:}" || continue ;;
    *) wants "$scope" || continue ;;
  esac
  [ -n "${used[$key]:-}" ] || echo "note: justified entry not needed in this run: $key"
done

echo
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
