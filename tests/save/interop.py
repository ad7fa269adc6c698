#!/usr/bin/python3
"""Cross-checks onnx-repack's output with onnx's own Python reader (python3-onnx).

usage: interop.py LISTFILE
Each line of LISTFILE is "SOURCE<TAB>OUTPUT<TAB>EXPECTATIONS" (comma-separated, may be
empty). For every line: onnx.checker.check_model(OUTPUT) passes (when it passes for SOURCE),
onnx.load() of both (external data resolved by onnx) gives the same tensors, found
everywhere (initializers, sparse initializers, attribute tensors, subgraphs, functions), with
equal dtype, shape and bytes; and the storage meets each expectation:
  inline               no tensor is external
  external-from=N      a tensor is external iff it has >= N bytes (zero-byte and string
                       tensors inline, and those readers need while building the graph);
                       attribute tensors too unless "attributes-inline"
  attributes-inline    every attribute tensor is inline
  checksum             every external tensor has a "checksum" key: SHA-1 of its bytes
  sharded=LIMIT        several data files named stem-0000i-of-0000n.ext, none past LIMIT
                       bytes unless it holds a single tensor
Prints one line per failure and a summary; exits 1 if anything failed.
"""
import collections
import hashlib
import os
import re
import sys

import onnx
from onnx import numpy_helper

EXTERNAL = onnx.TensorProto.EXTERNAL


def tensors(model):
    """(place, tensor, is_attribute) for every tensor in the model, in a stable order."""
    out = []

    def graph(g, scope):
        for t in g.initializer:
            out.append((f"{scope}/init:{t.name}", t, False))
        for s in g.sparse_initializer:
            out.append((f"{scope}/sparse:{s.values.name}/values", s.values, False))
            out.append((f"{scope}/sparse:{s.values.name}/indices", s.indices, False))
        nodes(g.node, scope)

    def nodes(node_list, scope):
        for i, node in enumerate(node_list):
            where = f"{scope}/{node.name or '#%d' % i}"
            for a in node.attribute:
                if a.HasField("t"):
                    out.append((f"{where}.{a.name}", a.t, True))
                for j, t in enumerate(a.tensors):
                    out.append((f"{where}.{a.name}[{j}]", t, True))
                if a.HasField("g"):
                    graph(a.g, f"{where}.{a.name}")
                for j, g in enumerate(a.graphs):
                    graph(g, f"{where}.{a.name}[{j}]")

    graph(model.graph, "graph")
    for f in model.functions:
        nodes(f.node, f"function:{f.domain}:{f.name}")
    return out


# Inputs whose values readers need while building the graph (SPEC 5c), written down here from
# docs/targets.md, independently of core/model/graph_build_inputs.cpp: a save keeps them inline.
GRAPH_BUILD_INPUTS = {
    "": {"Reshape": [1], "Expand": [1], "ConstantOfShape": [0], "Tile": [1], "Pad": [1, 3],
         "Slice": [1, 2, 3, 4], "Squeeze": [1], "Unsqueeze": [1], "Split": [1],
         "SplitToSequence": [1], "TopK": [1], "Range": [0, 1, 2], "Upsample": [1],
         "Resize": [1, 2, 3], "OneHot": [1], "CenterCropPad": [1], "Col2Im": [1, 2],
         "AffineGrid": [1], "DFT": [1, 2], "STFT": [1, 3], "HannWindow": [0],
         "HammingWindow": [0], "BlackmanWindow": [0], "MelWeightMatrix": [0, 1],
         **{"Reduce" + r: [1] for r in ("Sum", "Mean", "Max", "Min", "Prod", "L1", "L2",
                                         "LogSum", "LogSumExp", "SumSquare")}},
    "com.microsoft": {"ExpandDims": [1], "ConvTransposeWithDynamicPads": [2],
                      "GroupQueryAttention": [6], "Range": [0, 1, 2], "BeamSearch": [1, 3, 4],
                      "GreedySearch": [1]},
}


def graph_build_tensors(model):
    """ids of the TensorProtos readers need while building the graph: initializers (of the
    graph or an enclosing one) and Constant values feeding the inputs above, and every
    ConstantOfShape's value attribute."""
    marked = set()

    def walk(node_list, scopes):
        for node in node_list:
            domain = "" if node.domain in ("", "ai.onnx") else node.domain
            for a in node.attribute:
                if a.HasField("g"):
                    graph(a.g, scopes)
                for g in a.graphs:
                    graph(g, scopes)
                if domain == "" and a.name == "value" and a.HasField("t"):
                    if node.op_type == "Constant" and node.output:
                        scopes[-1][node.output[0]] = [a.t]
                    if node.op_type == "ConstantOfShape":
                        marked.add(id(a.t))
            for i in GRAPH_BUILD_INPUTS.get(domain, {}).get(node.op_type, []):
                if i < len(node.input) and node.input[i]:
                    for scope in reversed(scopes):
                        if node.input[i] in scope:
                            marked.update(id(t) for t in scope[node.input[i]])
                            break

    def graph(g, scopes):
        names = {t.name: [t] for t in g.initializer}
        names.update({s.values.name: [s.values, s.indices] for s in g.sparse_initializer})
        walk(g.node, scopes + [names])

    graph(model.graph, [])
    for f in model.functions:
        walk(f.node, [{}])
    return marked


def same_values(a, b):
    x, y = numpy_helper.to_array(a), numpy_helper.to_array(b)
    if x.dtype != y.dtype or x.shape != y.shape:
        return f"dtype/shape {x.dtype}{x.shape} != {y.dtype}{y.shape}"
    if x.dtype == object:
        return None if x.tolist() == y.tolist() else "string values differ"
    return None if x.tobytes() == y.tobytes() else "values differ"


def external_keys(t):
    return {e.key: e.value for e in t.external_data}


def value_bytes(t):
    """Byte size of a loaded (resolved) tensor's values; None for strings."""
    if t.data_type == onnx.TensorProto.STRING:
        return None
    return numpy_helper.to_array(t).nbytes


def check_storage(stored, loaded, expectations, out_dir, fail, kept_inline=frozenset()):
    threshold = None
    for e in expectations:
        if e.startswith("external-from="):
            threshold = int(e.split("=", 1)[1])
    files = collections.defaultdict(list)
    for (place, t, is_attr), (_, full, _) in zip(stored, loaded):
        external = t.data_location == EXTERNAL
        keys = external_keys(t)
        if external:
            files[keys.get("location")].append(place)
        if "inline" in expectations and external:
            fail(f"{place}: external, expected inline")
        if "attributes-inline" in expectations and is_attr and external:
            fail(f"{place}: attribute tensor external, expected inline")
        if threshold is not None and not (is_attr and "attributes-inline" in expectations):
            size = value_bytes(full)
            want = (size is not None and size > 0 and size >= threshold
                    and id(t) not in kept_inline)
            if want != external:
                fail(f"{place}: {size} bytes {'external' if external else 'inline'} "
                     f"with threshold {threshold}")
        if "checksum" in expectations and external:
            with open(os.path.join(out_dir, keys["location"]), "rb") as f:
                f.seek(int(keys.get("offset", "0")))
                data = f.read(int(keys["length"]))
            if keys.get("checksum") != hashlib.sha1(data).hexdigest():
                fail(f"{place}: checksum {keys.get('checksum')!r} is not the SHA-1 of its bytes")
    for e in expectations:
        if not e.startswith("sharded="):
            continue
        limit = int(e.split("=", 1)[1])
        names = sorted(files)
        if len(names) < 2:
            fail(f"expected several shards, found {names}")
        for name in names:
            m = re.fullmatch(r"(.+)-(\d{5})-of-(\d{5})(\..*)?", name or "")
            if not m or int(m.group(3)) != len(names):
                fail(f"shard name {name!r} is not stem-0000i-of-{len(names):05d}.ext")
            size = os.path.getsize(os.path.join(out_dir, name))
            if size > limit and len(files[name]) > 1:
                fail(f"shard {name} has {size} bytes, past the limit {limit}")


def check_pair(source, output, expectations, fail):
    try:
        onnx.checker.check_model(source)
        source_valid = True
    except Exception:  # the checker's verdict on the input is not ours to judge
        source_valid = False
    if source_valid:
        try:
            onnx.checker.check_model(output)
        except Exception as e:
            fail(f"check_model: {str(e).strip().splitlines()[0]}")
    want = tensors(onnx.load(source))
    got = tensors(onnx.load(output))
    if [p for p, _, _ in want] != [p for p, _, _ in got]:
        fail(f"tensor places differ: {[p for p, _, _ in want]} != {[p for p, _, _ in got]}")
        return 0
    for (place, a, _), (_, b, _) in zip(want, got):
        diff = same_values(a, b)
        if diff:
            fail(f"{place}: {diff}")
    stored_model = onnx.load(output, load_external_data=False)
    stored = tensors(stored_model)
    check_storage(stored, got, expectations, os.path.dirname(os.path.abspath(output)), fail,
                  graph_build_tensors(stored_model))
    return len(want)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    failures = 0
    pairs = tensor_count = 0
    with open(sys.argv[1]) as f:
        lines = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    for source, output, expect in lines:
        expectations = [e for e in expect.split(",") if e]

        def fail(message):
            nonlocal failures
            failures += 1
            print(f"{output}: {message}")

        try:
            tensor_count += check_pair(source, output, expectations, fail)
        except Exception as e:
            fail(f"{type(e).__name__}: {e}")
        pairs += 1
    print(f"interop: {pairs} outputs, {tensor_count} tensors compared, {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
