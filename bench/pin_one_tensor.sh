#!/usr/bin/env bash
# Issue 36 item 2: pin one tensor of a 4 GiB model that keeps its weights in two data files,
# then save in place, as the desktop app's Save does (keeping every other tensor where it is).
# A data file whose bytes do not change is not written: only the file the tensor leaves (or
# comes back to) and the model are. The --rewrite rows write every file, as saves did before.
# Each run alternates the pin (out of the file inline, then back), so every run moves a tensor;
# medians are given per direction. Out of the middle of a file, the file keeps its bytes (the
# tensor's range is orphaned, see issue 36 item 3), so only the model is written; back in, the
# tensor goes after the file's ranges and that one file is written anew.
#   bench/pin_one_tensor.sh [BUILD_DIR]   (default build; WEIGHTS=4G, RUNS=4)
set -euo pipefail
build=${1:-build}
runs=${RUNS:-4}
weights=${WEIGHTS:-4G}
gen=$build/bench/repack-genmodel
cli=$build/app/onnx-repack
pin=$build/bench/repack-bench-pin
for tool in "$gen" "$cli" "$pin"; do
  [[ -x $tool ]] || { echo "missing $tool: build it first (REPACK_BUILD_BENCH=ON)" >&2; exit 2; }
done
scratch=$(mktemp -d /var/tmp/repack-pin.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

mkdir -p "$scratch/one"
"$gen" --out "$scratch/one/model.onnx" --weights "$weights" >/dev/null
# Two data files of about half the weights each (a shard may end short of the size: a tensor
# never straddles two).
half=$(( $(stat -c %s "$scratch/one/model.onnx.data") / 2 + (256 << 20) ))
mkdir -p "$scratch/two"
"$cli" repack "$scratch/one/model.onnx" -o "$scratch/two/model.onnx" --shard-size "$half" >/dev/null
rm -rf "$scratch/one"
sync
echo "== files"
ls -l "$scratch/two"
echo "== kept: only files whose bytes change are written"
"$pin" "$scratch/two/model.onnx" --runs "$runs"
echo "== --rewrite: every data file written (before issue 36)"
"$pin" "$scratch/two/model.onnx" --runs "$runs" --rewrite
"$cli" verify "$scratch/two/model.onnx" >/dev/null && echo "verify: ok"
