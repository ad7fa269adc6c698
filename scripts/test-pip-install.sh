#!/usr/bin/env bash
# The Python package installed as Python users install it, from this tree and with nothing
# downloaded: `pip install --no-build-isolation .` into a fresh venv (Debian's setuptools drives
# the project's CMake), a wheel from `python3 -m build --wheel --no-isolation`, and the Python
# suites run against the installed module, with no PYTHONPATH into a build folder.
#   scripts/test-pip-install.sh [CLI]   (CLI: the onnx-repack the suites compare with;
#                                        default build/app/onnx-repack)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="$(realpath "${1:-$root/build/app/onnx-repack}")"
fail() { echo "test-pip-install: $*" >&2; exit 1; }
[ -x "$cli" ] || fail "no $cli: build the project first"
scratch="$(mktemp -d /var/tmp/repack-pip.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT

# numpy and onnx, the package's dependencies, are Debian's (python3-numpy, python3-onnx).
/usr/bin/python3 -m venv --system-site-packages "$scratch/venv"
python="$scratch/venv/bin/python"
"$python" -m pip install --quiet --no-build-isolation --no-index "$root" \
  || fail "pip install --no-build-isolation . failed"
said="$(cd "$scratch" && env -u PYTHONPATH "$python" -c \
  "import onnx_repack; print(onnx_repack.__file__, onnx_repack.__version__)")"
version="$(sed -nE 's/^project\(onnx-repack VERSION ([0-9.]+).*/\1/p' "$root/CMakeLists.txt")"
[[ $said == "$scratch/venv/lib/python3"*"/site-packages/onnx_repack/__init__.py $version" ]] \
  || fail "import onnx_repack in the venv found '$said', not the installed $version"
[ "$(cd "$scratch" && env -u PYTHONPATH "$python" -m onnx_repack --version)" = "onnx-repack $version" ] \
  || fail "python -m onnx_repack --version does not say onnx-repack $version"

# A wheel, with the module, the package's Python files and the stubs.
(cd "$root" && /usr/bin/python3 -m build --wheel --no-isolation --outdir "$scratch/dist" \
  >"$scratch/build.log" 2>&1) || { cat "$scratch/build.log" >&2; fail "python3 -m build failed"; }
wheels=("$scratch"/dist/onnx_repack-"$version"-*.whl)
[ -f "${wheels[0]}" ] || fail "python3 -m build wrote no onnx_repack-$version wheel"
contents="$(/usr/bin/python3 -m zipfile -l "${wheels[0]}")"
for file in onnx_repack/__init__.py onnx_repack/__main__.py onnx_repack/__init__.pyi \
  onnx_repack/py.typed; do
  grep -q "^$file " <<<"$contents" || fail "the wheel lacks $file"
done
grep -qE "^onnx_repack/_core\.cpython-[^ ]*\.so " <<<"$contents" || fail "the wheel lacks the module"
echo "test-pip-install: installed $said; wheel $(basename "${wheels[0]}")"

# The suites, from a folder outside the tree, against the venv's module.
cd "$scratch"
env -u PYTHONPATH REPACK_CLI="$cli" PYTHONPATH="$root/tests/python" PYTHONDONTWRITEBYTECODE=1 \
  "$python" -m unittest discover -s "$root/tests/python" -p 'test_*.py' -t "$root/tests/python" \
  || fail "the Python suites fail against the pip-installed module"
