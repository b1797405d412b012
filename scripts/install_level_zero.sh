#!/usr/bin/env bash
# Debian's Level Zero loader (libze1): with it, and scripts/level_zero_env.sh
# sourced, the Level Zero adapter finds the project's host driver
# (drivers/ze_host, built by scripts/build.sh). The main job's optional
# install; scripts/test.sh installs the headers too.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
apt_install_missing libze1
