#!/usr/bin/env bash
# What one model's `inspect` pays for its siblings (issue 26): the folder scan asks every other
# .onnx that names a data file which files it reads. Beside a sibling of 100,000 external
# tensors that reads its own data file (so its bytes name a candidate and it must be walked),
# against the same model alone; median of RUNS runs (default 5). Goal: <= 0.15 s, <= 24 MiB.
#   bench/sibling_search.sh [BUILD_DIR]     (default build; needs /usr/bin/time)
set -euo pipefail
build=${1:-build}
runs=${RUNS:-5}
cli=$build/app/onnx-repack
[[ -x $cli ]] || { echo "missing $cli: build it first" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time: apt-get install time" >&2; exit 2; }
scratch=$(mktemp -d /var/tmp/repack-sibling.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/alone" "$scratch/beside"

PYTHONPATH=$(dirname "${BASH_SOURCE[0]}") /usr/bin/python3 - "$scratch" <<'PY'
import os, sys
out = sys.argv[1]
from onnx_wire import entry, field
def external(name, location, offset):  # FLOAT [1], EXTERNAL
    return field(5, b"\x08\x01\x10\x01" + field(8, name) + entry(b"location", location)
                 + entry(b"offset", b"%d" % offset) + entry(b"length", b"4") + b"\x70\x01")
def model(tensors):
    return b"\x08\x08" + field(7, field(2, b"g") + tensors) + field(8, b"\x10\x11")
for folder in ("alone", "beside"):
    with open(os.path.join(out, folder, "model.onnx"), "wb") as f:
        f.write(model(external(b"w", b"model.onnx.data", 0)))
    with open(os.path.join(out, folder, "model.onnx.data"), "wb") as f:
        f.write(bytes(4))
count = 100_000
with open(os.path.join(out, "beside", "sibling.onnx"), "wb") as f:
    f.write(model(b"".join(external(b"t%d" % i, b"sibling.onnx_data", 4 * i) for i in range(count))))
with open(os.path.join(out, "beside", "sibling.onnx_data"), "wb") as f:
    f.write(bytes(4 * count))
PY

median() { sort -n | awk 'NF { v[++n] = $1 } END { print v[int((n + 1) / 2)] }'; }
printf '%-32s %9s %11s\n' "inspect model.onnx" seconds "peak MiB"
for folder in alone beside; do
    secs="" kib=""
    for ((r = 0; r < runs; r++)); do
        /usr/bin/time -f "%e %M" -o "$scratch/time" "$cli" inspect "$scratch/$folder/model.onnx" \
            >/dev/null
        read -r s k < "$scratch/time"
        secs+="$s"$'\n' kib+="$k"$'\n'
    done
    label=$([[ $folder == alone ]] && echo "alone" || echo "beside a 100,000-tensor sibling")
    printf '%-32s %9s %11s\n' "$label" "$(median <<<"$secs")" "$(($(median <<<"$kib") / 1024))"
done
