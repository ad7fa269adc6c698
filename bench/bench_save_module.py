#!/usr/bin/python3
"""onnx_repack.save against onnx.save_model and `cp && sync` of the same model, side by side.

    bench_save_module.py [--genmodel PATH] [--weights 1GiB] [--work DIR] [--runs N]

Makes a model of WEIGHTS bytes twice with repack-genmodel (inline, and external in one data
file), then for each times, in a fresh interpreter per run:
  onnx_repack   onnx_repack.save(IN, OUT, size_threshold_bytes=1024) (one data file); synced,
                as every save of the core is
  repack proto  onnx_repack.save(onnx.load(IN), OUT, size_threshold_bytes=1024): the proto in
                memory, its payloads read from it as they are written (python/proto_payloads.h)
  onnx          onnx.load(IN) then onnx.save_model(OUT, save_as_external_data=True,
                size_threshold=1024) and os.sync(), for the same durability
  cp+sync       cp of IN's files into OUT's folder, then sync: the floor for writing these bytes
Seconds are the save call's own (measured in the child, without the interpreter's start), and
the whole `sh -c 'cp && sync'` for cp+sync. Peak RSS is the child's ru_maxrss (os.wait4);
"above base" subtracts the peak of an interpreter that only imports the same modules. The page cache holds IN (warm) for every run;
the best of N runs is printed. Needs PYTHONPATH with build/python.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TOOLS = {
    "onnx_repack": ("import onnx_repack",
                    "onnx_repack.save(sys.argv[1], sys.argv[2], size_threshold_bytes=1024)"),
    # The proto in memory first, as a script that made it holds it (issue 24's save_proto).
    "repack proto": ("import onnx, onnx_repack",
                     "onnx_repack.save(onnx.load(sys.argv[1]), sys.argv[2], "
                     "size_threshold_bytes=1024)"),
    "onnx": ("import onnx",
             "onnx.save_model(onnx.load(sys.argv[1]), sys.argv[2], save_as_external_data=True, "
             "all_tensors_to_one_file=True, location=os.path.basename(sys.argv[2]) + '.data', "
             "size_threshold=1024); os.sync()"),
}


def run(argv):
    """Seconds, peak RSS (KiB) and standard output of one child process."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    child.stdout.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench_save_module: {' '.join(argv)} failed")
    return elapsed, usage.ru_maxrss, output


def python_run(imports, statement, src, out):
    """The seconds of the save call alone (the interpreter's start and imports left out) and
    the peak RSS of the process."""
    code = (f"import os, sys, time\n{imports}\nstarted = time.perf_counter()\n{statement}\n"
            "print(time.perf_counter() - started)\n")
    _, rss, output = run([sys.executable, "-c", code, src, out])
    return float(output), rss


def baseline(imports):
    return run([sys.executable, "-c", f"import os, sys\n{imports}\n"])[1]


def fresh(folder):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    subprocess.run(["sync"], check=True)  # earlier runs' writeback never lands in this one
    return folder


def measure(name, src, work, runs):
    rows = []
    src_files = [os.path.join(os.path.dirname(src), f) for f in sorted(os.listdir(os.path.dirname(src)))]
    for tool, (imports, statement) in TOOLS.items():
        base = baseline(imports)
        best = None
        for _ in range(runs):
            out = os.path.join(fresh(os.path.join(work, "out")), "model.onnx")
            seconds, rss = python_run(imports, statement, src, out)
            best = min(best or (seconds, rss), (seconds, rss))
        rows.append((name, tool, best[0], best[1], best[1] - base))
    best = None
    for _ in range(runs):
        out = fresh(os.path.join(work, "out"))
        seconds, rss, _ = run(["sh", "-c", 'cp "$@" && sync', "cp", *src_files, out])
        best = min(best or (seconds, rss), (seconds, rss))
    rows.append((name, "cp+sync", best[0], best[1], 0))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genmodel", default=os.path.join(ROOT, "build", "bench", "repack-genmodel"))
    parser.add_argument("--weights", default="1GiB")
    parser.add_argument("--work", help="folder for the models (default: a temporary one)")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="bench_save_module_")
    try:
        rows = []
        for storage in ("inline", "external"):
            src = os.path.join(work, storage, "model.onnx")
            os.makedirs(os.path.dirname(src), exist_ok=True)
            subprocess.run([args.genmodel, "-o", src, "--weights", args.weights, "--storage", storage],
                           check=True, stdout=subprocess.DEVNULL)
            rows += measure(f"{args.weights} {storage}", src, work, args.runs)
        print(f"{'model':<16} {'tool':<12} {'seconds':>8} {'vs cp':>6} {'peak RSS':>10} {'above base':>11}")
        floor = {r[0]: r[2] for r in rows if r[1] == "cp+sync"}
        for model, tool, seconds, rss, above in rows:
            print(f"{model:<16} {tool:<12} {seconds:8.2f} {seconds / floor[model]:5.2f}x "
                  f"{rss / 1024:8.0f} MiB {'' if tool == 'cp+sync' else f'{above / 1024:7.0f} MiB':>11}")
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
