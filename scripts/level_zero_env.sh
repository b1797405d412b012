# Sourced by scripts that run Level Zero code on this project's host driver
# (drivers/ze_host, built by `cargo build --release -p ze_host_driver`): the
# Level Zero loader (Debian libze1) then loads exactly that driver, in place
# of the drivers it would look for under the system's library paths.
#
#   source scripts/level_zero_env.sh
#   ZE_HOST_DRIVER=/path/to/libze_host_driver.so source ...   another build
_ze_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ZE_ENABLE_ALT_DRIVERS="${ZE_HOST_DRIVER:-${CARGO_TARGET_DIR:-$_ze_root/target}/release/libze_host_driver.so}"
unset _ze_root
