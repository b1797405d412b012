#!/usr/bin/env bash
# Builds the workspace (release) and gives each shared library the file name
# that UR loaders look for (libur_loader.so.0, libur_adapter_<name>.so.0).
# Prints the folder that holds them.
set -euo pipefail
cd "$(dirname "$0")/.."
# Cargo reports its progress on stderr; stdout carries only the folder.
cargo build --release --workspace "$@"
out=target/release
for lib in "$out"/libur_loader.so "$out"/libur_adapter_*.so; do
  [ -e "$lib" ] || continue
  ln -sf "$(basename "$lib")" "$lib.0"
done
echo "$out"
