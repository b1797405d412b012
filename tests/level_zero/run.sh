#!/usr/bin/env bash
# The host Level Zero driver (drivers/ze_host) through Debian's Level Zero
# loader: installs libze1/libze-dev and gcc if missing, builds the driver,
# compiles tests/level_zero/loader_test.c against the loader and runs it with
# scripts/level_zero_env.sh sourced. Ends with the test's "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh

apt_install_missing libze1 libze-dev gcc libc6-dev
cargo build --release -p ze_host_driver

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
gcc -std=c11 -Wall -Werror -Wno-missing-field-initializers -o "$work/loader_test" \
  tests/level_zero/loader_test.c -lze_loader

source scripts/level_zero_env.sh
echo "ZE_ENABLE_ALT_DRIVERS=$ZE_ENABLE_ALT_DRIVERS"
"$work/loader_test"
