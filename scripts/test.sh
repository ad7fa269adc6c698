#!/usr/bin/env bash
# Builds Onnx Repack and runs every test suite with CTest (GUI suites run offscreen), then the
# hostile-input hardening step: sanitizers and fuzzing (scripts/test-hardening.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The ci preset: the dev build with warnings as errors.
REPACK_PRESET=ci bash "$root/scripts/build.sh"
# Every C++ file as clang-format-14 and .clang-format lay it out (scripts/format.sh fixes them).
bash "$root/scripts/format.sh" --check
# ONNX Runtime (npm's onnxruntime-node) as an independent reader for the tests, when npm has it.
bash "$root/scripts/install-test-readers.sh"
# An S3 server that checks request signatures (npm's @20minutes/s3rver) for the s3:// tests.
bash "$root/scripts/install-test-s3rver.sh"
ctest --test-dir "$root/build" --output-on-failure -j "$(nproc)"
# The Debian package builds, installs with apt-get, runs, and is removed again.
bash "$root/scripts/test-package.sh" "$root/build"
# The Python package as pip installs it (a venv, a wheel), the Python suites against that.
bash "$root/scripts/test-pip-install.sh" "$root/build/app/onnx-repack"
# Then the suites again under ASan + UBSan and each fuzz target for 60 s (docs/fuzzing.md).
# REPACK_HARDENING=0 skips it for a quick local run; CI always runs it.
if [ "${REPACK_HARDENING:-1}" != 0 ]; then
  bash "$root/scripts/test-hardening.sh"
fi
