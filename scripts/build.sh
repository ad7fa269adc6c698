#!/usr/bin/env bash
# Configures and builds Onnx Repack into ./build with a preset of CMakePresets.json: `dev`
# (RelWithDebInfo, Ninja), or the one REPACK_PRESET names (scripts/test.sh uses `ci`, which adds
# -Werror).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
preset="${REPACK_PRESET:-dev}"
bash "$root/scripts/install-deps.sh"
cd "$root"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
