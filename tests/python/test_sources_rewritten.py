"""A data file rewritten in place while onnx_repack reads it (another program opens it "r+b" and
puts other bytes at the same offsets, as onnx.save_model does over its own data file): save and
the five external-data operations, 50 rounds each with a writer at a random moment, either
raise onnx_repack.Error of kind "changed" naming the file, or give every tensor from one
version of the file; never a mix."""
import os
import random
import shutil
import tempfile
import threading
import time
import unittest

import numpy as np
import onnx
from onnx import helper, numpy_helper

import onnx_repack

ROUNDS = 50
TENSORS = 16
TENSOR_BYTES = 1 << 20


def version_byte(version, i):
    return (version << 4) | i


class Source:
    """model.onnx with TENSORS uint8 tensors in model.onnx.data, every tensor at version 1."""

    def __init__(self, folder):
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        self.folder = folder
        inits = [numpy_helper.from_array(np.full(TENSOR_BYTES, version_byte(1, i), np.uint8), f"t{i}")
                 for i in range(TENSORS)]
        graph = helper.make_graph([], "g", [], [], initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        self.path = os.path.join(folder, "model.onnx")
        onnx.save_model(model, self.path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="model.onnx.data", size_threshold=1024)
        self.data = self.path + ".data"
        self.ranges = []
        for t in onnx.load(self.path, load_external_data=False).graph.initializer:
            entries = {e.key: e.value for e in t.external_data}
            self.ranges.append((int(entries["offset"]), int(t.name[1:])))
        time.sleep(0.02)  # the loader's stamps from an earlier clock tick than the writer's

    def rewrite_later(self, delay):
        """Rewrites every tensor with version 2 after `delay` seconds, one write per tensor."""
        def write():
            time.sleep(delay)
            with open(self.data, "r+b") as f:
                for offset, i in self.ranges:
                    os.pwrite(f.fileno(), bytes([version_byte(2, i)]) * TENSOR_BYTES, offset)
        thread = threading.Thread(target=write)
        thread.start()
        return thread


def version_of(arrays):
    """The one version every array holds in full, or a string describing the mix."""
    versions = set()
    for name, array in arrays.items():
        i = int(name.rsplit("t", 1)[1])
        flat = np.asarray(array).reshape(-1)
        if flat.size != TENSOR_BYTES:
            return f"{name}: {flat.size} bytes"
        v = int(flat[0]) >> 4
        if not np.all(flat == version_byte(v, i)):
            return f"{name} mixes versions within the tensor"
        versions.add(v)
    if len(arrays) != TENSORS:
        return f"{len(arrays)} tensors"
    return versions.pop() if len(versions) == 1 else f"versions {sorted(versions)}"


def values_of_file(path):
    return {t.name: numpy_helper.to_array(t, os.path.dirname(path)) for t in onnx.load(path).graph.initializer}


def values_of_protos(protos, base_dir):
    return {t.name: numpy_helper.to_array(t, base_dir) for t in protos}


def protos_of(source):
    return list(onnx.load(source.path, load_external_data=False).graph.initializer)


ENTRY_POINTS = {
    "save to a new folder": lambda s: (
        onnx_repack.save(s.path, os.path.join(s.folder, "out", "b.onnx"), external_data="b.data"),
        values_of_file(os.path.join(s.folder, "out", "b.onnx")))[1],
    "save in place": lambda s: (
        onnx_repack.save(s.path, s.path, external_data="w.bin"), values_of_file(s.path))[1],
    "load_to_model": lambda s: (lambda m: (
        onnx_repack.load_to_model(m), {t.name: t.numpy() for t in m.tensors})[1])(onnx_repack.load(s.path)),
    "unload_from_model": lambda s: (lambda m: (
        onnx_repack.unload_from_model(m, s.folder, "moved.bin", 1024),
        {t.name: t.numpy() for t in m.tensors})[1])(onnx_repack.load(s.path)),
    "convert_tensors_to_external": lambda s: values_of_protos(
        onnx_repack.convert_tensors_to_external(protos_of(s), s.folder, "converted.bin"), s.folder),
    "convert_tensors_from_external": lambda s: values_of_protos(
        onnx_repack.convert_tensors_from_external(protos_of(s), s.folder), s.folder),
}


class SourcesRewrittenTest(unittest.TestCase):
    def test_never_succeeds_with_mixed_bytes(self):
        scratch = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, scratch, ignore_errors=True)
        rng = random.Random()
        for name, entry in ENTRY_POINTS.items():
            with self.subTest(entry=name):
                folder = os.path.join(scratch, "m")
                source = Source(folder)
                started = time.monotonic()
                self.assertEqual(version_of(entry(source)), 1)
                run_seconds = time.monotonic() - started
                succeeded = refused = 0
                for round_ in range(ROUNDS):
                    source = Source(folder)
                    delay = rng.uniform(0, run_seconds * 1.25)
                    writer = source.rewrite_later(delay)
                    try:
                        values = entry(source)
                    except onnx_repack.Error as e:
                        self.assertEqual(e.kind, "changed", str(e))
                        self.assertIn("model.onnx.data", str(e))
                        refused += 1
                        continue
                    finally:
                        writer.join()
                    version = version_of(values)
                    self.assertIsInstance(
                        version, int, f"round {round_} (writer after {delay:.4f} s of a {run_seconds:.4f} s "
                        f"run) succeeded with mixed bytes: {version}")
                    succeeded += 1
                print(f"{name}: {succeeded} rounds with one version, {refused} refused")
                self.assertGreater(succeeded, 0)


if __name__ == "__main__":
    unittest.main()
