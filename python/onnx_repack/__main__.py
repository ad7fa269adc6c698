"""`python -m onnx_repack inspect|verify|repack|plan|diff|clean ...`: the commands of the
`onnx-repack` executable, with its output and exit codes, for installs that have none on PATH."""
import sys

from ._core import _run_cli


def main():
    sys.stdout.flush()
    return _run_cli(["onnx-repack", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
