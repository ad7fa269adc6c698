#!/usr/bin/env bash
# Peak memory of reading a hostile safetensors header: a data file whose header holds N
# zero-length entries (valid, so it is parsed to the end) before one real tensor, and a model
# referencing that tensor; `onnx-repack inspect` of it under /usr/bin/time.
#   bench/safetensors_header_memory.sh [ENTRIES] [BUILD_DIR]   (default 1400000: ~80 MB; build)
set -euo pipefail
entries=${1:-1400000}
build=${2:-build}
scratch=$(mktemp -d /var/tmp/repack-st-header.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
/usr/bin/python3 - "$entries" "$scratch" <<'PY'
import os, struct, sys
import onnx
from onnx import TensorProto, helper
n, out = int(sys.argv[1]), sys.argv[2]
parts = ['"t%d":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}' % i for i in range(n)]
parts.append('"w":{"dtype":"U8","shape":[16],"data_offsets":[0,16]}')
text = "{" + ",".join(parts) + "}"
text += " " * ((8 - (8 + len(text)) % 8) % 8)
with open(os.path.join(out, "w.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text.encode() + bytes(range(16)))
t = TensorProto(name="w", data_type=TensorProto.UINT8, dims=[16])
t.data_location = TensorProto.EXTERNAL
for k, v in (("location", "w.safetensors"), ("offset", str(8 + len(text))), ("length", "16")):
    e = t.external_data.add()
    e.key, e.value = k, v
onnx.save_model(helper.make_model(helper.make_graph([], "g", [], [], [t])), os.path.join(out, "m.onnx"))
print(f"header: {len(text)} bytes, {n + 1} entries")
PY
/usr/bin/time -f "inspect: %e s, peak RSS %M KiB" "$build/app/onnx-repack" inspect "$scratch/m.onnx" >/dev/null
