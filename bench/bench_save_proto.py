#!/usr/bin/python3
"""Saving an onnx.ModelProto held in memory: onnx_repack.save(proto, ...) against
onnx.save_model(proto, ...), the save call alone.

    bench_save_proto.py MODEL [--runs N]
    bench_save_proto.py --build SIZE [--runs N]     (SIZE: 256MiB, 1GiB, ...)

--build writes the model issue 37 names first (into the work folder): SIZE of inline weights
in tensors of 16 MiB (16 of them for 256 MiB, 64 for 1 GiB), plus 17 small tensors of 4 KiB
(33 tensors at 256 MiB), each an initializer of one graph, random bytes.
For each tool, in a fresh interpreter per run: onnx.load(MODEL) (all weights in memory), the
peak RSS reset to the current RSS (/proc/self/clear_refs), then the save with external data
(1 KiB threshold, one data file) and os.sync() for onnx (every save of the core is synced).
Runs alternate between the tools; prints the median of N runs: seconds of the save, and the
peak RSS above the loaded proto's RSS, and the ratio of the times.
Needs PYTHONPATH with build/python (or an installed onnx_repack). onnx_ir is not installed
here: its row (issue 37) cannot be run.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import os, sys, time, onnx
tool, src, out = sys.argv[1:4]
proto = onnx.load(src)
if tool == "onnx_repack":
    import onnx_repack
def status(key):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith(key + ":"))
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
base = status("VmRSS")
started = time.perf_counter()
if tool == "onnx_repack":
    onnx_repack.save(proto, out, size_threshold_bytes=1024)
else:
    onnx.save_model(proto, out, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=os.path.basename(out) + ".data", size_threshold=1024)
    os.sync()
print(time.perf_counter() - started, status("VmHWM") - base, base)
"""

MIB = 1 << 20


def parse_size(text):
    units = {"KiB": 1 << 10, "MiB": MIB, "GiB": 1 << 30}
    for unit, factor in units.items():
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * factor)
    return int(text)


def build(path, size):
    """Issue 37's model: SIZE in tensors of 16 MiB and 17 tensors of 4 KiB, inline."""
    import numpy as np
    import onnx
    from onnx import helper, TensorProto
    rng = np.random.default_rng(37)
    initializers = []
    for i in range(size // (16 * MIB)):
        raw = rng.integers(0, 255, 16 * MIB, dtype=np.uint8).tobytes()
        initializers.append(helper.make_tensor(f"w{i}", TensorProto.FLOAT, [4 * MIB], raw, raw=True))
    for i in range(17):
        raw = rng.integers(0, 255, 4096, dtype=np.uint8).tobytes()
        initializers.append(helper.make_tensor(f"s{i}", TensorProto.FLOAT, [1024], raw, raw=True))
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4 * MIB])
    graph = helper.make_graph([helper.make_node("Identity", ["w0"], ["y"])], "g", [], [out],
                              initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return len(initializers)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?")
    parser.add_argument("--build", help="write issue 37's model of this size first")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if bool(args.model) == bool(args.build):
        parser.error("give MODEL or --build SIZE")
    work = tempfile.mkdtemp(prefix="bench_save_proto_", dir="/var/tmp")
    try:
        model = args.model
        if args.build:
            model = os.path.join(work, "built.onnx")
            count = build(model, parse_size(args.build))
            print(f"model: {args.build} inline, {count} tensors ({os.path.getsize(model)} bytes)")
        tools = ("onnx_repack", "onnx")
        runs = {tool: [] for tool in tools}
        for _ in range(args.runs):
            for tool in tools:
                out = os.path.join(work, "out")
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out)
                subprocess.run(["sync"], check=True)
                result = subprocess.run([sys.executable, "-c", CHILD, tool, model,
                                         os.path.join(out, "model.onnx")],
                                        capture_output=True, text=True, check=True)
                seconds, above, base = result.stdout.split()
                runs[tool].append((float(seconds), int(above), int(base)))
        print(f"{'tool':<12} {'seconds':>8} {'peak above proto':>17} {'proto RSS':>10}   runs (s)")
        medians = {}
        for tool in tools:
            seconds = statistics.median(r[0] for r in runs[tool])
            above = statistics.median(r[1] for r in runs[tool])
            base = statistics.median(r[2] for r in runs[tool])
            medians[tool] = seconds
            each = " ".join(f"{r[0]:.2f}" for r in runs[tool])
            print(f"{tool:<12} {seconds:8.2f} {above / 1024:13.0f} MiB {base / 1024:6.0f} MiB   {each}")
        ratio = medians["onnx_repack"] / medians["onnx"]
        print(f"onnx_repack / onnx: {ratio:.2f}x; / (0.62 x onnx, onnx_ir's share in issue 37): "
              f"{ratio / 0.62:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
