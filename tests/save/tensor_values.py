#!/usr/bin/python3
"""What onnx's own Python reader (python3-onnx) sees in a model: an independent reader for the
save suites.

usage: tensor_values.py MODEL
Loads MODEL with onnx.load(MODEL) (external data resolved by onnx, relative to MODEL's folder)
and prints one JSON object: tensor name -> SHA-1 (hex) of numpy_helper.to_array(t).tobytes(),
for every tensor anywhere in the model (initializers, sparse initializers, attribute tensors,
subgraphs, functions). Exits 1 with the reason on stderr when the model does not load.
"""
import hashlib
import json
import sys

import onnx
from onnx import numpy_helper


def tensors(model):
    out = []

    def graph(g):
        out.extend(g.initializer)
        for s in g.sparse_initializer:
            out.extend([s.values, s.indices])
        nodes(g.node)

    def nodes(node_list):
        for node in node_list:
            for a in node.attribute:
                if a.HasField("t"):
                    out.append(a.t)
                out.extend(a.tensors)
                if a.HasField("g"):
                    graph(a.g)
                for g in a.graphs:
                    graph(g)

    graph(model.graph)
    for f in model.functions:
        nodes(f.node)
    return out


def main():
    path = sys.argv[1]
    try:
        model = onnx.load(path)
        values = {}
        for t in tensors(model):
            values[t.name] = hashlib.sha1(numpy_helper.to_array(t).tobytes()).hexdigest()
    except Exception as e:  # any failure to load is the finding
        print(f"onnx.load({path}) failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(values, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
