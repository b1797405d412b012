# What the differential tests of a SYCL client on our adapters against
# Intel's stack share (tests/dpctl/run.sh, tests/sycl_info/run.sh); sourced,
# never run, after `root` is set to the checkout.
#
# Sets here (the test's folder), out (build/<that folder's name>, for its
# outputs), opencl_adapter and native_cpu_adapter (our release libraries) and
# targets (the script's arguments, checked: intel, pocl, native_cpu; all
# three by default), and defines wants, pass and fail; the caller's last
# line is `$passed passed, $failed failed`.

here=$(cd "$(dirname "$0")" && pwd)
out=$root/build/$(basename "$here")
opencl_adapter=$root/target/release/libur_adapter_opencl.so.0
native_cpu_adapter=$root/target/release/libur_adapter_native_cpu.so.0

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(intel pocl native_cpu)
for t in "${targets[@]}"; do
  case $t in
    intel | pocl | native_cpu) ;;
    *) echo "usage: $0 [intel] [pocl] [native_cpu]" >&2; exit 2 ;;
  esac
done

# wants <target>: whether the run covers that target.
wants() { [[ " ${targets[*]} " == *" $1 "* ]]; }

passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL $*"
}
