#!/usr/bin/env bash
# Builds and starts the desktop app on MODEL (default: the bundled sample model, which opens
# read-only: Save As… writes a copy). Without a display the app says so and prints
# `onnx-repack inspect` of the model instead.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/build.sh"
exec "$root/build/app/onnx-repack-gui" "$@"
