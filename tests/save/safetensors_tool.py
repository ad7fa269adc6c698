#!/usr/bin/python3
"""An independent reader and writer of safetensors data files, for tst_safetensors.

The format is read from its documentation with json and struct only (no safetensors package):
8 bytes little-endian header length N, N bytes of JSON, then the tensors' bytes. The reference
reader's rules are checked: N <= 100,000,000, the header starts with '{', every entry has a
dtype, shape and data_offsets, the dtype x shape size is its range's, the ranges are back to
back from 0 and end exactly at the end of the file.

usage:
  safetensors_tool.py check MODEL   every data file MODEL's external tensors use is a valid
                                    safetensors file; each external tensor has an entry at
                                    exactly its range with its dtype and shape and at a
                                    multiple of its element size, and the bytes the entry
                                    names are the bytes onnx.load reads for the tensor. Prints the files' names and header names, one per line.
  safetensors_tool.py make DIR [--mismatch]
                                    writes DIR/model.onnx and DIR/weights.safetensors the way
                                    another tool would (its own names, __metadata__, a padded
                                    header, two empty entries the model does not use); with
                                    --mismatch one ONNX tensor disagrees with its
                                    entry (FLOAT16 [4, 8] over an F32 [4, 4] entry, same bytes).
Exits 1 with a message on the first failure.
"""
import json
import os
import struct
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tensor_values import tensors as all_tensors  # noqa: E402  every tensor, in one order

EXTERNAL = onnx.TensorProto.EXTERNAL
DTYPES = {
    onnx.TensorProto.BOOL: ("BOOL", 1), onnx.TensorProto.UINT8: ("U8", 1),
    onnx.TensorProto.INT8: ("I8", 1), onnx.TensorProto.UINT16: ("U16", 2),
    onnx.TensorProto.INT16: ("I16", 2), onnx.TensorProto.FLOAT16: ("F16", 2),
    onnx.TensorProto.BFLOAT16: ("BF16", 2), onnx.TensorProto.UINT32: ("U32", 4),
    onnx.TensorProto.INT32: ("I32", 4), onnx.TensorProto.FLOAT: ("F32", 4),
    onnx.TensorProto.UINT64: ("U64", 8), onnx.TensorProto.INT64: ("I64", 8),
    onnx.TensorProto.DOUBLE: ("F64", 8),
    17: ("F8_E4M3", 1), 19: ("F8_E5M2", 1),  # FLOAT8E4M3FN, FLOAT8E5M2 (ONNX 1.14+)
}
SIZES = {name: size for name, size in DTYPES.values()}


def fail(message):
    print(message)
    sys.exit(1)


def read_header(path):
    """(data_start, {name: entry}) of a safetensors file, or fail() saying why not."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            fail(f"{path}: shorter than a safetensors length prefix")
        (n,) = struct.unpack("<Q", raw)
        if n > 100_000_000 or 8 + n > size:
            fail(f"{path}: header length {n} is past the limit or the file")
        text = f.read(n)
    if not text.startswith(b"{"):
        fail(f"{path}: header does not start with '{{'")
    header = json.loads(text.decode("utf-8"))
    meta = header.pop("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        fail(f"{path}: __metadata__ is not a string map")
    ranges = []
    for name, e in header.items():
        if set(e) != {"dtype", "shape", "data_offsets"}:
            fail(f"{path}: entry {name!r} has keys {sorted(e)}")
        dims_ok = all(isinstance(d, int) and d >= 0 for d in e["shape"])
        offsets = e["data_offsets"]
        if not dims_ok or len(offsets) != 2 or not all(isinstance(o, int) and o >= 0 for o in offsets):
            fail(f"{path}: entry {name!r}: shape and data_offsets must be non-negative integers")
        begin, end = offsets
        count = 1
        for d in e["shape"]:
            count *= d
        if e["dtype"] in SIZES and count * SIZES[e["dtype"]] != end - begin:
            fail(f"{path}: entry {name!r}: {e['dtype']} {e['shape']} is not {end - begin} bytes")
        ranges.append((begin, end, name))
    ranges.sort()
    covered = 0
    for begin, end, name in ranges:
        if begin != covered or end < begin:
            fail(f"{path}: entry {name!r} at [{begin}, {end}) leaves a gap or overlaps at {covered}")
        covered = end
    if 8 + n + covered != size:
        fail(f"{path}: tensors end at {8 + n + covered}, the file at {size}")
    return 8 + n, header


def check(model_path):
    folder = os.path.dirname(os.path.abspath(model_path))
    references = onnx.load(model_path, load_external_data=False)
    loaded = onnx.load(model_path)  # onnx's own reader resolves the same references
    headers = {}
    for t, value in zip(all_tensors(references), all_tensors(loaded)):
        if t.data_location != EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        path = os.path.join(folder, info["location"])
        if path not in headers:
            headers[path] = read_header(path)
            print("file", info["location"])
            for name in headers[path][1]:
                print("name", name)
        start, header = headers[path]
        offset = int(info.get("offset", "0"))
        length = int(info["length"])
        at = [e for e in header.values()
              if e["data_offsets"] == [offset - start, offset - start + length]]
        dtype, size = DTYPES.get(t.data_type, ("?", 1))
        # Zero-length entries may share a range: one of them must be this tensor's.
        if not any(e["dtype"] == dtype and e["shape"] == list(t.dims) for e in at):
            fail(f"{t.name}: no entry of {path} at data offsets "
                 f"[{offset - start}, {offset - start + length}] with {dtype} {list(t.dims)}; "
                 f"there: {at}")
        if (offset - start) % size or offset % size:
            fail(f"{t.name}: at data offset {offset - start}, not a multiple of its {size}-byte "
                 "elements")
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read(length)
        # onnx.load's own read of the reference (interop.py compares values with the source).
        if value.raw_data != data:
            fail(f"{t.name}: the entry's bytes are not the tensor's values")
    if not headers:
        fail(f"{model_path}: no external tensors")


def make(folder, mismatch):
    rng = np.random.default_rng(7)
    weights = [
        ("encoder.embed.weight", rng.standard_normal((64, 32)).astype(np.float32)),
        ("encoder.layer.0.bias", np.arange(48, dtype=np.int64)),
        ("decoder.proj.weight", rng.standard_normal((4, 4)).astype(np.float32)),
        ("decoder.mask", (np.arange(24) % 3 == 0).reshape(2, 12)),
    ]
    names = {np.dtype(np.float32): "F32", np.dtype(np.int64): "I64", np.dtype(np.bool_): "BOOL"}
    header = {"__metadata__": {"format": "pt", "producer": "another tool"}}
    offset = 0
    for i, (name, array) in enumerate(weights):
        if i == 1:  # empty entries at the next tensor's offset, listed before it
            for empty in ("encoder.unused.a", "encoder.unused.b"):
                header[empty] = {"dtype": "F32", "shape": [0, 8], "data_offsets": [offset, offset]}
        header[name] = {"dtype": names[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    text = json.dumps(header, indent=1).encode()
    text += b" " * ((-len(text)) % 64)  # padded, as some writers align the data
    start = 8 + len(text)
    with open(os.path.join(folder, "weights.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _, array in weights:
            f.write(array.tobytes())
    initializers = []
    offset = start
    for i, (name, array) in enumerate(weights):
        t = numpy_helper.from_array(array, name.replace(".", "_"))
        if mismatch and i == 2:  # the same 64 bytes, read as FLOAT16 [4, 8]
            t = numpy_helper.from_array(array.view(np.float16).reshape(4, 8), t.name)
        t.ClearField("raw_data")
        t.data_location = EXTERNAL
        for key, value in (("location", "weights.safetensors"), ("offset", str(offset)),
                           ("length", str(array.nbytes))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        initializers.append(t)
        offset += array.nbytes
    outputs = [helper.make_tensor_value_info("out", onnx.TensorProto.FLOAT, [64, 32])]
    node = helper.make_node("Identity", [initializers[0].name], ["out"])
    graph = helper.make_graph([node], "g", [], outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())


def main(argv):
    if len(argv) >= 3 and argv[1] == "check":
        check(argv[2])
    elif len(argv) >= 3 and argv[1] == "make":
        make(argv[2], "--mismatch" in argv[3:])
    else:
        fail(__doc__)


if __name__ == "__main__":
    main(sys.argv)
