"""Runs onnx 1.12's strict shape inference over each model named on the command line: the part
of loading in which readers such as ONNX Runtime need the values of shape, axes, pads, ...
inputs, and refuse external ones. Prints "ok PATH" or "error PATH: MESSAGE" per model; exits 1
if any failed."""
import sys
import tempfile

import onnx


def main(paths):
    failed = False
    with tempfile.TemporaryDirectory() as scratch:
        for path in paths:
            try:
                onnx.shape_inference.infer_shapes_path(path, scratch + "/inferred.onnx",
                                                       strict_mode=True)
                print(f"ok {path}")
            except Exception as e:  # onnx raises several kinds; each is a refusal here
                failed = True
                print(f"error {path}: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
