"""Fixtures the Python package's tests share: small models made with python3-onnx, the CLI to
compare with, and checks over folders."""
import hashlib
import os
import subprocess
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CLI = os.environ.get("REPACK_CLI", "")


def tensor_values(path):
    """Every initializer and Constant value of the model at `path`, as numpy arrays."""
    model = onnx.load(path)
    values = {t.name: numpy_helper.to_array(t, os.path.dirname(path)) for t in model.graph.initializer}
    for node in model.graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR:
                values[node.name + "." + attr.name] = numpy_helper.to_array(attr.t, os.path.dirname(path))
    return values


def make_model(folder, name="model.onnx", external=True, tensors=None, constant=True):
    """A model with initializers of many sizes (some above 1 MiB), a Constant attribute tensor,
    and optionally its weights in `name`.data as python-onnx writes them. Returns its path."""
    rng = np.random.default_rng(7)
    if tensors is None:
        tensors = {
            "big": rng.standard_normal((512, 640)).astype(np.float32),  # 1.25 MiB
            "mid": rng.integers(-100, 100, (300, 300)).astype(np.int64),
            "half": rng.standard_normal((64, 64)).astype(np.float16),
            "small": np.arange(10, dtype=np.int32),
            "big2": rng.standard_normal((300, 1000)).astype(np.float32),
            "bytes": rng.integers(0, 255, 3000).astype(np.uint8),
        }
    inits = [numpy_helper.from_array(v, k) for k, v in tensors.items()]
    nodes = [helper.make_node("Identity", [k], [k + "_out"], name="id_" + k) for k in tensors]
    outputs = [helper.make_tensor_value_info(k + "_out", onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], v.shape)
               for k, v in tensors.items()]
    if constant:
        value = numpy_helper.from_array(rng.standard_normal(2048).astype(np.float32), "cvalue")
        nodes.append(helper.make_node("Constant", [], ["c_out"], name="const", value=value))
        outputs.append(helper.make_tensor_value_info("c_out", TensorProto.FLOAT, [2048]))
    graph = helper.make_graph(nodes, "g", [], outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = os.path.join(folder, name)
    os.makedirs(folder, exist_ok=True)
    if external:
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=name + ".data", size_threshold=1024)
    else:
        onnx.save_model(model, path)
    return path


def sparse_external_model(folder, nbytes, name="big.onnx", tensors=1):
    """A model whose `tensors` float32 initializers of nbytes each live in a sparse data file
    (zeros, no disk blocks, no memory to make): for memory and cancellation tests."""
    os.makedirs(folder, exist_ok=True)
    data = name + ".data"
    inits = []
    for i in range(tensors):
        t = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[nbytes // 4])
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", data), ("offset", str(i * nbytes)), ("length", str(nbytes))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        inits.append(t)
    graph = helper.make_graph([helper.make_node("Identity", ["w0"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [nbytes // 4])],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(os.path.join(folder, data), "wb") as f:
        f.truncate(nbytes * tensors)
    path = os.path.join(folder, name)
    onnx.save_model(model, path)
    return path


def folder_digest(folder):
    """{relative path: sha1} of every file under `folder`."""
    out = {}
    for root, _, files in os.walk(folder):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, folder)] = hashlib.sha1(fh.read()).hexdigest()
    return out


def run_cli(*args):
    if not CLI:
        raise unittest.SkipTest("REPACK_CLI is not set")
    return subprocess.run([CLI, *args], capture_output=True, text=True)


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def cached_share(path, length=None):
    """The share of the pages of the first `length` bytes (all) of the file at `path` that are
    in the page cache (mincore), 0 to 1."""
    import ctypes
    import mmap
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = min(os.path.getsize(path), length or os.path.getsize(path))
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    with open(path, "rb") as f:
        at = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, f.fileno(), 0)
    if at in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "mmap " + path)
    try:
        vector = ctypes.create_string_buffer(pages)
        if libc.mincore(at, size, vector) != 0:
            raise OSError(ctypes.get_errno(), "mincore " + path)
        return sum(b & 1 for b in vector.raw) / pages
    finally:
        libc.munmap(at, size)


def drops_clean_pages(folder):
    """Whether the file system of `folder` drops a file's written pages from the page cache on
    request (posix_fadvise DONTNEED); tmpfs does not: its files are their pages."""
    path = os.path.join(folder, "drop_probe")
    with open(path, "wb") as f:
        f.write(b"\x01" * (1 << 20))
        f.flush()
        os.fsync(f.fileno())
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    try:
        return cached_share(path) < 0.5
    finally:
        os.unlink(path)


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="onnx_repack_test_")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def assertSameValues(self, expected, path):
        got = tensor_values(path)
        self.assertEqual(sorted(expected), sorted(got))
        for name, value in expected.items():
            np.testing.assert_array_equal(value, got[name], err_msg=name)
