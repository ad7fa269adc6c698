#!/usr/bin/env bash
# Installs ONNX Runtime for Node.js (npm's onnxruntime-node, whose CPU binaries ship inside the
# package) into build/readers, as an independent reader for the tests (tests/readers/). Only for
# tests; nothing of it is built into the product. Without npm or the registry the tests fall
# back to python3-onnx's strict shape inference and say so.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/install-npm-for-tests.sh" readers onnxruntime-node 1.30.0 \
  "ONNX Runtime checks fall back to python3-onnx"
