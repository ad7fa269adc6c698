#!/usr/bin/python3
"""Counts tensors and their bytes in every ONNX model under a folder, with python3-onnx.

An independent implementation of the indexing rules of core/model/tensor_index.cpp, used by
tst_testdata_crosscheck: walks the main graph, subgraphs at any depth, node attributes
(TENSOR, TENSORS, SPARSE_TENSOR(S), GRAPH, GRAPHS) and model functions. Bytes are dtype width
x elements (sub-byte types packed, strings the sum of their lengths); unknown sizes count 0.

Prints one JSON object: {"files": {relative path: {"tensors", "inline_bytes",
"external_bytes"} or {"error"}}}.
"""
import json
import os
import sys

import onnx

# Bits per element by TensorProto.DataType number (onnx.proto); 0: no fixed width.
BITS = {
    1: 32, 2: 8, 3: 8, 4: 16, 5: 16, 6: 32, 7: 64, 8: 0, 9: 8, 10: 16, 11: 64, 12: 32,
    13: 64, 14: 64, 15: 128, 16: 16, 17: 8, 18: 8, 19: 8, 20: 8, 21: 4, 22: 4, 23: 4, 24: 8,
}
UINT64_MAX = 2**64 - 1


def tensor_bytes(t):
    if any(d < 0 for d in t.dims):
        return 0
    elements = 1
    for d in t.dims:
        elements *= d
    if elements > UINT64_MAX:
        return 0
    if t.data_type == onnx.TensorProto.STRING:
        return sum(len(s) for s in t.string_data)
    bits = BITS.get(t.data_type, 0)
    if bits == 0:
        return 0
    size = (elements * bits + 7) // 8
    return size if size <= UINT64_MAX else 0


class Totals:
    def __init__(self):
        self.tensors = 0
        self.inline_bytes = 0
        self.external_bytes = 0

    def add(self, t):
        self.tensors += 1
        if t.data_location == onnx.TensorProto.EXTERNAL:
            self.external_bytes += tensor_bytes(t)
        else:
            self.inline_bytes += tensor_bytes(t)

    def add_sparse(self, s):
        self.add(s.values)
        self.add(s.indices)

    def graph(self, g):
        for t in g.initializer:
            self.add(t)
        for s in g.sparse_initializer:
            self.add_sparse(s)
        self.nodes(g.node)

    def nodes(self, nodes):
        for node in nodes:
            for a in node.attribute:
                if a.HasField("t"):
                    self.add(a.t)
                for t in a.tensors:
                    self.add(t)
                if a.HasField("sparse_tensor"):
                    self.add_sparse(a.sparse_tensor)
                for s in a.sparse_tensors:
                    self.add_sparse(s)
                if a.HasField("g"):
                    self.graph(a.g)
                for g in a.graphs:
                    self.graph(g)


def count(path):
    model = onnx.load(path, load_external_data=False)
    totals = Totals()
    if model.HasField("graph"):
        totals.graph(model.graph)
    for f in model.functions:
        totals.nodes(f.node)
    return {"tensors": totals.tensors, "inline_bytes": totals.inline_bytes,
            "external_bytes": totals.external_bytes}


def main():
    root = sys.argv[1]
    files = {}
    for folder, _, names in os.walk(root):
        for name in sorted(names):
            if not name.endswith(".onnx"):
                continue
            path = os.path.join(folder, name)
            try:
                files[os.path.relpath(path, root)] = count(path)
            except Exception as e:  # reported per file; the C++ side fails on it
                files[os.path.relpath(path, root)] = {"error": str(e)}
    json.dump({"files": files}, sys.stdout)


if __name__ == "__main__":
    main()
