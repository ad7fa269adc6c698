#!/usr/bin/env bash
# Installs ONNX Runtime for Node.js (npm's onnxruntime-node, whose CPU binaries ship inside the
# package) into build/readers, as an independent reader for the tests (tests/readers/). Only for
# tests; nothing of it is built into the product. Without npm or the registry the tests fall
# back to python3-onnx's strict shape inference and say so.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/build/readers"
version=1.30.0
if [ -f "$dir/node_modules/onnxruntime-node/package.json" ] \
  && grep -q "\"version\": \"$version\"" "$dir/node_modules/onnxruntime-node/package.json"; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-test-readers: no npm; ONNX Runtime checks fall back to python3-onnx" >&2
  exit 0
fi
mkdir -p "$dir"
echo "Installing onnxruntime-node@$version for the tests into $dir" >&2
if ! (cd "$dir" && timeout 600 npm install --ignore-scripts --no-audit --no-fund --no-save \
    --prefix "$dir" "onnxruntime-node@$version" >/dev/null 2>&1); then
  echo "install-test-readers: npm install failed; ONNX Runtime checks fall back to python3-onnx" >&2
fi
