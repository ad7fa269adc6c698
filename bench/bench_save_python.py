#!/usr/bin/python3
"""python3-onnx doing what `onnx-repack repack IN -o OUT` does, for bench/save_vs_cp_and_onnx.sh.

    bench_save_python.py IN OUT [--location NAME] [--inline]

onnx.load(IN) (external data loaded into memory), then onnx.save_model(OUT) with every tensor
of at least 1024 bytes in one external file NAME (default: OUT's name + ".data") beside OUT.
Prints the phases ("load_s X", "save_s Y"). OUT may equal IN: onnx then appends the tensors to
the existing data file, which grows with every re-save. With --inline every tensor is saved
inside OUT instead (onnx.save_model without external data). Nothing is synced to disk.
"""
import argparse
import os
import time

import onnx


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--location")
    parser.add_argument("--inline", action="store_true")
    args = parser.parse_args()
    location = args.location or os.path.basename(args.output) + ".data"

    started = time.perf_counter()
    model = onnx.load(args.input)
    loaded = time.perf_counter()
    if args.inline:
        onnx.save_model(model, args.output)
    else:
        onnx.save_model(model, args.output, save_as_external_data=True,
                        all_tensors_to_one_file=True, location=location, size_threshold=1024)
    saved = time.perf_counter()
    print(f"load_s {loaded - started:.3f}")
    print(f"save_s {saved - loaded:.3f}")


if __name__ == "__main__":
    main()
