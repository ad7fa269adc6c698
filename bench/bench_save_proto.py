#!/usr/bin/python3
"""Saving an onnx.ModelProto held in memory: onnx_repack.save(proto, ...) against
onnx.save_model(proto, ...), the save call alone.

    bench_save_proto.py MODEL [--runs N]

For each tool, in a fresh interpreter per run: onnx.load(MODEL) (all weights in memory), the
peak RSS reset to the current RSS (/proc/self/clear_refs), then the save with external data
(1 KiB threshold, one data file) and os.sync() for onnx (every save of the core is synced).
Prints the best of N runs: seconds of the save, and the peak RSS above the loaded proto's RSS.
Needs PYTHONPATH with build/python (or an installed onnx_repack).
"""
import argparse
import os
import shutil
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench_save_proto_", dir="/var/tmp")
    try:
        print(f"{'tool':<12} {'seconds':>8} {'peak above proto':>17} {'proto RSS':>10}")
        for tool in ("onnx_repack", "onnx"):
            best = None
            for _ in range(args.runs):
                out = os.path.join(work, "out")
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out)
                subprocess.run(["sync"], check=True)
                result = subprocess.run([sys.executable, "-c", CHILD, tool, args.model,
                                         os.path.join(out, "model.onnx")],
                                        capture_output=True, text=True, check=True)
                seconds, above, base = result.stdout.split()
                run = (float(seconds), int(above), int(base))
                best = min(best or run, run)
            print(f"{tool:<12} {best[0]:8.2f} {best[1] / 1024:13.0f} MiB {best[2] / 1024:6.0f} MiB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
