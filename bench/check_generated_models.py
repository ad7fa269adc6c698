"""Cross-checks repack-genmodel with python3-onnx, deriving every expectation from the
generator's contract (and the sample's documented layout), not from our own tool's output.

usage: check_generated_models.py GENMODEL ONNX_REPACK SAMPLE_DIR SCRATCH_DIR
"""
import json
import os
import subprocess
import sys
import unittest

import numpy as np
import onnx
from onnx import numpy_helper

GEN, CLI, SAMPLE_DIR, SCRATCH = sys.argv[1:5]


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def external(tensor):
    entries = {e.key: e.value for e in tensor.external_data}
    return entries["location"], int(entries["offset"]), int(entries["length"])


def all_tensors(graph, scope="graph"):
    """(scope, kind, tensor) for initializers, attribute tensors and subgraphs, recursively."""
    for t in graph.initializer:
        yield scope, "initializer", t
    for i, node in enumerate(graph.node):
        label = node.name or f"#{i}"
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR:
                yield scope, "attribute", attr.t
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from all_tensors(attr.g, f"{scope}/{label}/{attr.name}")


class Sample(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.path = os.path.join(SCRATCH, "sample.onnx")
        run(GEN, "--sample", "--out", cls.path)
        cls.model = onnx.load(cls.path, load_external_data=False)
        with open(cls.path + ".data", "rb") as data:
            cls.data = data.read()
        cls.tensors = list(all_tensors(cls.model.graph))

    def test_committed_sample_is_what_the_generator_writes(self):
        for name in ("sample.onnx", "sample.onnx.data"):
            with open(os.path.join(SAMPLE_DIR, name), "rb") as committed:
                with open(os.path.join(SCRATCH, name), "rb") as fresh:
                    self.assertEqual(committed.read(), fresh.read(), f"regenerate {name}")

    def test_checker_accepts_it_and_values_load(self):
        onnx.checker.check_model(self.path)
        loaded = onnx.load(self.path)
        for t in loaded.graph.initializer:
            self.assertTrue(np.all(np.isfinite(numpy_helper.to_array(t))), t.name)

    def test_every_storage_case_is_present(self):
        kinds = set()
        for scope, kind, t in self.tensors:
            if t.data_location == onnx.TensorProto.EXTERNAL:
                kinds.add("external")
                if scope != "graph":
                    kinds.add("subgraph external")
            elif t.HasField("raw_data"):
                kinds.add("raw")
            else:
                kinds.add("typed")
            if kind == "attribute":
                kinds.add("attribute")
            if scope != "graph":
                kinds.add("subgraph")
            if t.data_type == onnx.TensorProto.FLOAT16:
                kinds.add("float16")
        self.assertTrue({"external", "subgraph external", "raw", "typed", "attribute",
                         "subgraph", "float16"} <= kinds, kinds)
        scopes = {scope for scope, _, _ in self.tensors}
        self.assertIn("graph/branch/then_branch", scopes)
        self.assertIn("graph/branch/else_branch", scopes)

    def ranges(self):
        return sorted(external(t)[1:] for _, _, t in self.tensors
                      if t.data_location == onnx.TensorProto.EXTERNAL)

    def test_data_file_has_aligned_big_tensor_padding_and_orphan(self):
        ranges = self.ranges()
        big = [(o, n) for o, n in ranges if n >= 64 * 1024]
        self.assertTrue(big and all(o % 4096 == 0 for o, _ in big), ranges)
        gaps, end = [], 0
        for offset, length in ranges:
            if offset > end:
                gaps.append((end, offset))
            end = max(end, offset + length)
        self.assertEqual(end, len(self.data))
        zero = [g for g in gaps if self.data[g[0]:g[1]] == bytes(g[1] - g[0])]
        stale = [g for g in gaps if g not in zero]
        self.assertTrue(any(b == big[0][0] for _, b in zero), f"padding before big: {gaps}")
        self.assertEqual([b - a for a, b in stale], [3000])

    def test_inspect_shows_all_of_it(self):
        report = json.loads(run(CLI, "inspect", "--json", self.path))
        self.assertEqual(len(report["tensors"]), len(self.tensors))
        # The 3000 stale bytes are the one thing to say: orphaned, with the fix.
        self.assertEqual([(p["severity"], p["code"]) for p in report["problems"]],
                         [("warning", "orphaned-bytes")])
        self.assertIn("3000 bytes", report["problems"][0]["message"])
        (f,) = report["files"]
        self.assertEqual(f["orphaned_bytes"], 3000)
        self.assertEqual(f["bytes"], len(self.data))
        referenced = sum(n for _, n in self.ranges())
        self.assertEqual(f["referenced_bytes"], referenced)
        self.assertEqual(f["padding_bytes"], len(self.data) - referenced - 3000)


class Synthetic(unittest.TestCase):
    WEIGHTS = 8 << 20

    def generate(self, name, *options):
        path = os.path.join(SCRATCH, name)
        run(GEN, "--out", path, "--weights", str(self.WEIGHTS), "--seed", "7", *options)
        onnx.checker.check_model(path, full_check=True)
        return path

    def test_external_and_inline_hold_the_same_values(self):
        ext = onnx.load(self.generate("ext.onnx", "--align", "4K"))
        inl = onnx.load(self.generate("inl.onnx", "--storage", "inline"))
        self.assertEqual(len(ext.graph.initializer), len(inl.graph.initializer))
        total = 0
        for a, b in zip(ext.graph.initializer, inl.graph.initializer):
            x, y = numpy_helper.to_array(a), numpy_helper.to_array(b)
            self.assertTrue(np.array_equal(x, y), a.name)
            self.assertTrue(np.all(np.isfinite(x)) and np.abs(x).max() < 1, a.name)
            total += x.nbytes
        hidden = ext.graph.input[0].type.tensor_type.shape.dim[1].dim_value
        # The lm_head's vocabulary takes up what the layers leave, rounded down to a row.
        self.assertGreater(total, self.WEIGHTS - 2 * hidden)
        self.assertLessEqual(total, self.WEIGHTS)

    def test_threshold_alignment_and_dense_file(self):
        path = self.generate("aligned.onnx", "--align", "4K", "--align-threshold", "64K")
        model = onnx.load(path, load_external_data=False)
        end = 0
        for t in model.graph.initializer:
            size = np.prod(t.dims, dtype=np.int64) * (2 if t.data_type == 10 else 4)
            if size < 1024:
                self.assertNotEqual(t.data_location, onnx.TensorProto.EXTERNAL, t.name)
                continue
            location, offset, length = external(t)
            self.assertEqual((location, length), ("aligned.onnx.data", size))
            if size >= 64 * 1024:
                self.assertEqual(offset % 4096, 0, t.name)
            self.assertGreaterEqual(offset, end)
            self.assertLess(offset - end, 4096)
            end = offset + length
        self.assertEqual(os.path.getsize(path + ".data"), end)

    def test_tensor_count_and_determinism(self):
        a = self.generate("many.onnx", "--tensors", "3000")
        self.assertEqual(len(onnx.load(a, load_external_data=False).graph.initializer), 3000)
        b = self.generate("many2.onnx", "--tensors", "3000")
        with open(a + ".data", "rb") as x, open(b + ".data", "rb") as y:
            self.assertEqual(x.read(), y.read())


if __name__ == "__main__":
    os.makedirs(SCRATCH, exist_ok=True)
    unittest.main(argv=sys.argv[:1], verbosity=2)
