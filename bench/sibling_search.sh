#!/usr/bin/env bash
# What one model's `inspect` pays for its siblings (issues 26, 35, 37): the folder scan asks the
# other .onnx files which data files they read. Beside a sibling of 100,000 external tensors that
# reads its own data file (so it must be walked), and beside a 1 GiB inline sibling plus another
# model with its own data file (a candidate nobody but that model reads, so every sibling is
# asked: the walk must skip the inline one's payloads, never read them), against the same model
# alone; median of RUNS runs (default 5). Goals: <= 0.15 s, <= 24 MiB; the model alone + 20 ms.
#   bench/sibling_search.sh [BUILD_DIR]     (default build; needs /usr/bin/time)
set -euo pipefail
build=${1:-build}
runs=${RUNS:-5}
cli=$build/app/onnx-repack
[[ -x $cli ]] || { echo "missing $cli: build it first" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time: apt-get install time" >&2; exit 2; }
scratch=$(mktemp -d /var/tmp/repack-sibling.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/alone" "$scratch/beside" "$scratch/inline"

PYTHONPATH=$(dirname "${BASH_SOURCE[0]}") /usr/bin/python3 - "$scratch" <<'PY'
import os, sys
out = sys.argv[1]
from onnx_wire import entry, field
def external(name, location, offset):  # FLOAT [1], EXTERNAL
    return field(5, b"\x08\x01\x10\x01" + field(8, name) + entry(b"location", location)
                 + entry(b"offset", b"%d" % offset) + entry(b"length", b"4") + b"\x70\x01")
def model(tensors):
    return b"\x08\x08" + field(7, field(2, b"g") + tensors) + field(8, b"\x10\x11")
for folder in ("alone", "beside", "inline"):
    with open(os.path.join(out, folder, "model.onnx"), "wb") as f:
        f.write(model(external(b"w", b"model.onnx.data", 0)))
    with open(os.path.join(out, folder, "model.onnx.data"), "wb") as f:
        f.write(bytes(4))
count = 100_000
with open(os.path.join(out, "beside", "sibling.onnx"), "wb") as f:
    f.write(model(b"".join(external(b"t%d" % i, b"sibling.onnx_data", 4 * i) for i in range(count))))
with open(os.path.join(out, "beside", "sibling.onnx_data"), "wb") as f:
    f.write(bytes(4 * count))
# 1 GiB inline: 32 raw_data tensors of 32 MiB (UINT8), then a model with its own data file.
chunk = 32 << 20
with open(os.path.join(out, "inline", "big.onnx"), "wb") as f:
    f.write(b"\x08\x08")
    def varint(n):
        o = bytearray()
        while True:
            b = n & 0x7F
            n >>= 7
            o.append(b | (0x80 if n else 0))
            if not n:
                return bytes(o)
    payload = bytes(chunk)
    parts = []
    for i in range(32):
        head = b"\x08" + varint(chunk) + b"\x10\x02" + field(8, b"big%d" % i)
        raw_tag = b"\x4a" + varint(chunk)  # raw_data = field 9, length-delimited
        tensor_len = len(head) + len(raw_tag) + chunk
        parts.append((b"\x2a" + varint(tensor_len) + head + raw_tag, payload))
    graph_len = len(field(2, b"g")) + sum(len(h) + len(p) for h, p in parts)
    f.write(b"\x3a" + varint(graph_len) + field(2, b"g"))
    for h, p in parts:
        f.write(h)
        f.write(p)
    f.write(field(8, b"\x10\x11"))
with open(os.path.join(out, "inline", "other.onnx"), "wb") as f:
    f.write(model(external(b"o", b"other.onnx_data", 0)))
with open(os.path.join(out, "inline", "other.onnx_data"), "wb") as f:
    f.write(bytes(4))
PY
# The sibling must be a model every reader accepts as one: the index of it must load.
"$cli" inspect "$scratch/inline/big.onnx" >/dev/null
cat "$scratch/inline/big.onnx" >/dev/null # in the page cache, as the issue measured

median() { sort -n | awk 'NF { v[++n] = $1 } END { print v[int((n + 1) / 2)] }'; }
printf '%-32s %9s %11s\n' "inspect model.onnx" seconds "peak MiB"
for folder in alone beside inline; do
    secs="" kib=""
    for ((r = 0; r < runs; r++)); do
        /usr/bin/time -f "%e %M" -o "$scratch/time" "$cli" inspect "$scratch/$folder/model.onnx" \
            >/dev/null
        read -r s k < "$scratch/time"
        secs+="$s"$'\n' kib+="$k"$'\n'
    done
    case $folder in
        alone) label="alone" ;;
        beside) label="beside a 100,000-tensor sibling" ;;
        inline) label="beside a 1 GiB inline sibling" ;;
    esac
    printf '%-32s %9s %11s\n' "$label" "$(median <<<"$secs")" "$(($(median <<<"$kib") / 1024))"
done
