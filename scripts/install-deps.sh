#!/usr/bin/env bash
# Installs the Debian packages that building, running and testing Onnx Repack need,
# only when some are missing. Needs root (or sudo) for apt-get.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  qt6-base-dev qt6-qpa-plugins libgl-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  nlohmann-json3-dev libcli11-dev libssl-dev libcurl4-openssl-dev
  python3-onnx python3-numpy libonnx-testdata
  pybind11-dev python3-dev
  python3-venv python3-setuptools python3-wheel python3-build
  xvfb xauth
  nginx-light # the web server of the remote-source suites (tests/remote), on 127.0.0.1 only
  clang-14 libfuzzer-14-dev libclang-rt-14-dev clang-format-14
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "Installing Debian packages: ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
