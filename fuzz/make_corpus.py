#!/usr/bin/python3
"""Seed corpora for the fuzz targets (docs/fuzzing.md), generated, never committed.

    /usr/bin/python3 fuzz/make_corpus.py OUT

OUT/models:        .onnx files for model_load, wire_scan and tensor_index: every model of
                   Debian's libonnx-testdata, the bundled sample, every tensor .pb of the testdata
                   as an initializer, and models shaped like the test fixtures (subgraphs, GRAPHS,
                   functions, sparse, attribute tensors, every dtype, typed and raw storage,
                   payloads of 1 KiB and more, repeated raw_data fields).
OUT/external_models: the models of OUT/external_data alone, for tensor_index (external_data
                   keys and locations without the data file).
OUT/external_data: MODEL "=REPACK-DATA=" DATA inputs for external_data: models converted to
                   external data, their locations pointed at every name the target's folder has
                   (fuzz_external_data.cpp), with offsets and lengths in and out of range.
"""
import glob
import hashlib
import json
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data

SEPARATOR = b"=REPACK-DATA="
TESTDATA = "/usr/share/libonnx-testdata/data"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "resources", "sample", "sample.onnx")
# Names the external_data target's folder holds (and a few it does not).
LOCATIONS = ["model.onnx.data", "weights.bin", "sub/data.bin", "link.bin", "sub/up.bin",
             "escape.bin", "abs.bin", "dangling.bin", "loop.bin", "dir", "pipe", "model.onnx",
             "../outside/secret.bin", "/etc/passwd", "sub/../model.onnx.data", "missing.bin",
             "*/_ORT_MEM_ADDR_/*", ""]
MAX_SEED = 64 << 10


def write(folder, data):
    if len(data) > MAX_SEED:
        return
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def model_of(graph, functions=()):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid("local", 1)])
    m.ir_version = 8
    m.functions.extend(functions)
    return m


def tensor(name, dtype, count):
    """A raw_data tensor of `count` elements of numpy `dtype`."""
    return numpy_helper.from_array(np.arange(count).astype(dtype), name)


def fixture_models():
    """Models shaped like tests/support's fixtures."""
    ints = helper.make_tensor("typed", TensorProto.INT64, [3], [1, 2, 3])
    floats = helper.make_tensor("floats", TensorProto.FLOAT, [2, 2], [1.0, 2.0, 3.0, 4.0])
    strings = helper.make_tensor("names", TensorProto.STRING, [2], [b"a", b"bc"])
    halfs = helper.make_tensor("half", TensorProto.FLOAT16, [4], np.ones(4, np.float16).view(np.uint16))
    big = tensor("big", np.float32, 512)  # 2 KiB: stays in the file on load
    small = tensor("small", np.float32, 4)
    branch = helper.make_graph([], "then", [], [helper.make_tensor_value_info("y", 1, [4])],
                               [tensor("big", np.float32, 300)])
    node_if = helper.make_node("If", ["c"], ["y"], name="cond", then_branch=branch,
                               else_branch=helper.make_graph([], "else", [], []))
    const = helper.make_node("Constant", [], ["k"], name="const", value=tensor("k", np.int64, 200))
    consts = helper.make_node("Custom", [], ["t"], name="custom", domain="local",
                              tensors=[small, tensor("many", np.int8, 1500)])
    graphs = helper.make_node("Custom", [], [], name="g", domain="local",
                              graphs=[helper.make_graph([], "g0", [], [], [tensor("g0", np.int32, 10)])])
    sparse = helper.make_sparse_tensor(tensor("sv", np.float32, 3),
                                       numpy_helper.from_array(np.array([1, 5, 9], np.int64), "si"),
                                       [100])
    fn = helper.make_function("local", "f", ["x"], ["y"],
                              [helper.make_node("Constant", [], ["y"], value=tensor("fw", np.float32, 300))],
                              [helper.make_opsetid("", 17)])
    graph = helper.make_graph([node_if, const, consts, graphs], "main",
                              [helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", 1, [4])],
                              [big, small, ints, floats, strings, halfs], sparse_initializer=[sparse])
    yield model_of(graph, [fn])
    # Every dtype, raw and typed.
    dtypes = [(1, np.float32), (2, np.uint8), (3, np.int8), (4, np.uint16), (5, np.int16),
              (6, np.int32), (7, np.int64), (9, np.bool_), (10, np.float16), (11, np.float64),
              (12, np.uint32), (13, np.uint64), (14, np.complex64), (15, np.complex128)]
    inits = [tensor("raw%d" % d, t, 5) for d, t in dtypes]
    for d in (16, 17, 18, 19, 20, 21, 22, 23, 24):  # bfloat16, float8, int4, float4
        t = TensorProto(name="new%d" % d, data_type=d, dims=[7], raw_data=bytes(range(7)))
        inits.append(t)
    inits.append(helper.make_tensor("i32", TensorProto.INT32, [3], [1, -2, 3]))
    inits.append(helper.make_tensor("u64", TensorProto.UINT64, [2], [1, 2**63]))
    inits.append(helper.make_tensor("dbl", TensorProto.DOUBLE, [2], [0.5, -1.0]))
    inits.append(TensorProto(name="negative", data_type=1, dims=[-1, 4], raw_data=b"\0" * 16))
    inits.append(TensorProto(name="overflow", data_type=1, dims=[2**62, 2**62]))
    inits.append(TensorProto(name="unknown", data_type=99, dims=[2], raw_data=b"\0\0"))
    yield model_of(helper.make_graph([], "dtypes", [], [], inits))
    # A function-only model.
    m = model_of(helper.make_graph([], "g", [], []), [fn])
    m.ClearField("graph")
    yield m


def testdata_models():
    for path in sorted(glob.glob(os.path.join(TESTDATA, "**", "*.onnx"), recursive=True)):
        with open(path, "rb") as f:
            yield f.read()


def testdata_tensors():
    """Every tensor .pb of the testdata (inputs and outputs) as the initializer of a model."""
    for path in sorted(glob.glob(os.path.join(TESTDATA, "**", "*.pb"), recursive=True)):
        t = TensorProto()
        try:
            with open(path, "rb") as f:
                t.ParseFromString(f.read())
        except Exception:
            continue
        if not t.name:
            t.name = os.path.basename(path)
        yield model_of(helper.make_graph([], "pb", [], [], [t]))


# ONNX element types by their safetensors dtype (core/model/safetensors.cpp); others are given "U8".
SAFETENSORS_DTYPES = {1: "F32", 2: "U8", 3: "I8", 4: "U16", 5: "I16", 6: "I32", 7: "I64",
                      9: "BOOL", 10: "F16", 11: "F64", 12: "U32", 13: "U64", 16: "BF16"}


def safetensors_variant(m, data):
    """`m` (external, into `data`) with its data file rewritten as a safetensors file: a
    JSON header, then the tensors back to back; the offsets moved past the header."""
    v = onnx.ModelProto()
    v.CopyFrom(m)
    tensors = [t for t in onnx.external_data_helper._get_all_tensors(v)
               if onnx.external_data_helper.uses_external_data(t)]
    header, body = {"__metadata__": {"format": "pt"}}, bytearray()
    for i, t in enumerate(tensors):
        info = {e.key: e.value for e in t.external_data}
        offset, length = int(info["offset"]), int(info["length"])
        dtype = SAFETENSORS_DTYPES.get(t.data_type, "U8")
        shape = list(t.dims) if dtype != "U8" or t.data_type == 2 else [length]
        header["t%d" % i] = {"dtype": dtype, "shape": shape,
                             "data_offsets": [len(body), len(body) + length]}
        t.ClearField("external_data")
        body += data[offset:offset + length]
        t.external_data.add(key="location", value="model.onnx.data")
        t.external_data.add(key="offset", value="START+%d" % (len(body) - length))
        t.external_data.add(key="length", value=str(length))
    text = json.dumps(header).encode()
    text += b" " * ((-len(text)) % 8)
    start = 8 + len(text)
    for t in tensors:
        for e in t.external_data:
            if e.key == "offset":
                e.value = str(start + int(e.value.split("+")[1]))
    return v.SerializeToString() + SEPARATOR + struct.pack("<Q", len(text)) + text + bytes(body)


def external_variants(model):
    """`model` moved to external data, then its locations, offsets and lengths varied."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    convert_model_to_external_data(m, all_tensors_to_one_file=True, location="model.onnx.data",
                                   size_threshold=0)
    # onnx only writes the data when saving; lay it out here the way it would.
    data = bytearray()
    for t in onnx.external_data_helper._get_all_tensors(m):
        if not onnx.external_data_helper.uses_external_data(t) or not t.HasField("raw_data"):
            continue
        while len(data) % 4096:
            data.append(0)
        offset = len(data)
        data += t.raw_data
        t.ClearField("raw_data")
        del t.external_data[:]
        for k, v in (("location", "model.onnx.data"), ("offset", str(offset)),
                     ("length", str(len(data) - offset))):
            e = t.external_data.add()
            e.key, e.value = k, v
    yield m.SerializeToString() + SEPARATOR + bytes(data)
    yield safetensors_variant(m, data)
    external = [t for t in onnx.external_data_helper._get_all_tensors(m)
                if onnx.external_data_helper.uses_external_data(t)]
    if not external:
        return
    for i, location in enumerate(LOCATIONS):
        v = onnx.ModelProto()
        v.CopyFrom(m)
        tensors = [t for t in onnx.external_data_helper._get_all_tensors(v)
                   if onnx.external_data_helper.uses_external_data(t)]
        t = tensors[i % len(tensors)]
        for e in t.external_data:
            if e.key == "location":
                e.value = location
        yield v.SerializeToString() + SEPARATOR + bytes(data)
    for key, value in (("offset", "-1"), ("offset", "99999999999999999999"), ("length", "1x"),
                       ("length", "18446744073709551615"), ("offset", "18446744073709551615"),
                       ("checksum", "00"), ("basepath", "/"), ("bogus", "1")):
        v = onnx.ModelProto()
        v.CopyFrom(m)
        t = [t for t in onnx.external_data_helper._get_all_tensors(v)
             if onnx.external_data_helper.uses_external_data(t)][0]
        e = t.external_data.add()
        e.key, e.value = key, value
        yield v.SerializeToString() + SEPARATOR + bytes(data)


def main(out):
    models = os.path.join(out, "models")
    external = os.path.join(out, "external_data")
    external_models = os.path.join(out, "external_models")
    for data in testdata_models():
        write(models, data)
    with open(SAMPLE, "rb") as f:
        write(models, f.read())
    sample = onnx.load(SAMPLE, load_external_data=False)
    with open(SAMPLE + ".data", "rb") as f:
        write(external, sample.SerializeToString() + SEPARATOR + f.read())
    sample_inline = onnx.load(SAMPLE)
    candidates = [sample_inline] + list(fixture_models())
    for m in candidates:
        write(models, m.SerializeToString())
    for m in testdata_tensors():
        write(models, m.SerializeToString())
    # Repeated raw_data fields and a merged repeated initializer: protobuf keeps the last.
    fixture = candidates[1].SerializeToString()
    write(models, fixture + fixture)
    for path in sorted(glob.glob(os.path.join(TESTDATA, "*", "*", "model.onnx"))):
        m = onnx.load(path)
        if len(m.graph.initializer) > 0:
            candidates.append(m)
    for m in candidates:
        for data in external_variants(m):
            write(external, data)
            write(external_models, data.split(SEPARATOR)[0])
    for folder in (models, external, external_models):
        print("%s: %d seeds" % (folder, len(os.listdir(folder))))


if __name__ == "__main__":
    main(sys.argv[1])
