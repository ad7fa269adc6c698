"""Inspect and safely rewrite where ONNX models keep their weights.

load(path) opens a model lazily (Model.tensors, Tensor.numpy() zero-copy), a local file or a URL
as the CLI takes it (http(s)://, hf://ORG/REPO[@REV]/PATH, s3://BUCKET/KEY); save(model_or_path,
out_path, **options) rewrites storage crash-safely with the options of `onnx-repack repack`;
verify, diff and plan return the documents of the CLI's --json. `python -m onnx_repack` runs
the CLI. See docs/python.md.
"""
from ._core import *  # noqa: F401,F403 (the extension module is the API)
from ._core import __version__  # noqa: F401
