"""Type stubs of onnx_repack, the Python package of Onnx Repack (docs/python.md)."""
import os
import threading
from typing import Any, Callable, Iterable, Literal, Optional, Sequence, TypedDict, Union

import numpy

__version__: str

PathLike = Union[str, os.PathLike[str]]
# A path, or a str naming a model that is not a local file, as the CLI's MODEL:
# http(s)://HOST/PATH, hf://ORG/REPO[@REV]/PATH, s3://BUCKET/KEY (an os.PathLike is always a path).
ModelSource = Union[str, os.PathLike[str]]
Size = Union[int, str]  # bytes, or text like "4KiB", "1MiB"
ProgressCallback = Callable[[int, int, str], object]  # (bytes_done, bytes_total, tensor)

class Conflict(TypedDict):
    file: str
    users: list[str]
    message: str

class Error(Exception):
    kind: Literal["io", "corrupt", "format", "not_found", "usage", "consent_needed", "busy",
                  "changed", "cancelled", "out_of_memory", "internal"]
    conflicts: list[Conflict]

class IoError(Error, OSError): ...
class Corrupt(Error, ValueError): ...
class FormatError(Error, ValueError): ...
class ConsentRequired(Error, FileExistsError): ...
class NotFound(Error, FileNotFoundError): ...
class Cancelled(Error): ...
class Busy(Error): ...
class Changed(Error): ...
class UsageError(Error, ValueError): ...
class OutOfMemory(Error, MemoryError): ...

class Problem(TypedDict):
    severity: Literal["error", "warning"]
    tensor: str
    code: str
    message: str

class Region(TypedDict):
    type: Literal["tensor", "padding", "orphaned", "overlap", "header"]
    offset: int
    length: int
    tensor: Optional[str]
    shared: bool

class FileLayout(TypedDict):
    location: str
    path: str
    bytes: int
    referenced_bytes: int
    padding_bytes: int
    orphaned_bytes: int
    overlapping_bytes: int
    shared_bytes: int
    header_bytes: int
    regions: list[Region]

class Tensor:
    @property
    def name(self) -> str: ...
    @property
    def scope(self) -> str: ...
    @property
    def kind(self) -> Literal["initializer", "attribute", "sparse"]: ...
    @property
    def dtype(self) -> Union[numpy.dtype[Any], str]: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def nbytes(self) -> Optional[int]: ...
    @property
    def storage(self) -> Literal["inline", "external"]: ...
    @property
    def location(self) -> Optional[str]: ...
    @property
    def offset(self) -> Optional[int]: ...
    @property
    def length(self) -> Optional[int]: ...
    @property
    def checksum(self) -> Optional[str]: ...
    def numpy(self) -> numpy.ndarray[Any, Any]:
        """A read-only zero-copy view of the tensor's mapped bytes; raises Error (kind
        'changed') once the model was saved or changed after this handle was taken."""

class Model:
    @property
    def path(self) -> str: ...
    @property
    def base_dir(self) -> str: ...
    @property
    def tensors(self) -> list[Tensor]: ...
    @property
    def problems(self) -> list[Problem]: ...
    def layout(self) -> list[FileLayout]: ...
    def inspect(self, deep: bool = False, target: str = "") -> dict[str, Any]: ...
    def set_base_dir(self, base_dir: PathLike) -> None: ...
    def load_to_model(self) -> None: ...
    def unload_from_model(
        self,
        base_dir: PathLike,
        relative_path: str,
        size_threshold_bytes: int = 0,
        force: bool = False,
    ) -> None: ...
    def convert_tensors_to_external(
        self, tensors: Iterable[Any], base_dir: PathLike, relative_path: str, force: bool = False
    ) -> list[Any]:
        """Tensor handles or onnx.TensorProto in; onnx.TensorProto referring to the file out."""
    def convert_tensors_from_external(self, tensors: Iterable[Any]) -> list[Any]:
        """Tensor handles or onnx.TensorProto in; in-memory onnx.TensorProto out."""

class SaveReport:
    @property
    def model_path(self) -> str: ...
    @property
    def data_files(self) -> list[str]: ...
    @property
    def bytes_written(self) -> int: ...
    @property
    def data_bytes(self) -> int: ...
    @property
    def padding_bytes(self) -> int: ...
    @property
    def external_tensors(self) -> int: ...
    @property
    def inline_tensors(self) -> int: ...
    @property
    def seconds(self) -> float: ...
    @property
    def unchanged(self) -> bool: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def no_longer_used(self) -> list[str]: ...
    @property
    def removed(self) -> list[str]: ...

class CancelToken:
    def __init__(self) -> None: ...
    def cancel(self) -> None: ...
    @property
    def cancelled(self) -> bool: ...

def load(path: ModelSource) -> Model: ...
def save(
    model_or_path: Union[Model, ModelSource, Any],  # Any: an onnx.ModelProto
    out_path: PathLike,
    *,
    external_data: Optional[str] = None,
    size_threshold_bytes: Optional[Size] = None,
    align: Optional[Size] = None,
    align_threshold: Optional[Size] = None,
    order: Optional[Literal["declaration", "size"]] = None,
    shard_size: Optional[Size] = None,
    checksum: bool = False,
    inline: bool = False,
    target: Optional[Literal["ort", "optimum", "web", "hub"]] = None,
    format: Optional[Literal["onnx", "safetensors"]] = None,
    dedupe: bool = False,
    plan: Union[None, PathLike, dict[str, Any]] = None,
    force: bool = False,
    progress: Optional[ProgressCallback] = None,
    cancel: Union[None, CancelToken, threading.Event] = None,
    attributes: bool = True,
    allow_corrupt: bool = False,
    remove_unused: bool = False,
    rewrite: bool = False,
    wait: Optional[float] = None,
    base_dir: Optional[PathLike] = None,
    compact: Union[None, PathLike, Sequence[PathLike]] = None,
) -> SaveReport: ...
# SPEC 4's operations as functions (the methods of Model, the model first), and the
# tensor-list ones over onnx.TensorProto objects alone, as onnx_ir's external_data module.
def set_base_dir(model: Model, base_dir: PathLike) -> None: ...
def load_to_model(model: Model) -> None: ...
def unload_from_model(
    model: Model,
    base_dir: PathLike,
    relative_path: str,
    size_threshold_bytes: int = 0,
    force: bool = False,
) -> None: ...
def convert_tensors_to_external(
    tensors: Iterable[Any], base_dir: PathLike, relative_path: str, force: bool = False
) -> list[Any]: ...
def convert_tensors_from_external(tensors: Iterable[Any], base_dir: PathLike) -> list[Any]: ...
def save_proto(proto: Any, out_path: PathLike, base_dir: Optional[PathLike] = None, **options: Any) -> SaveReport: ...
def verify(model_or_path: Union[Model, ModelSource]) -> dict[str, Any]: ...
def diff(a: Union[Model, ModelSource], b: Union[Model, ModelSource]) -> dict[str, Any]: ...
def inspect_folder(dir: ModelSource) -> dict[str, Any]: ...  # a path, or hf://ORG/REPO[@REV]/DIR
def save_folder(
    dir: PathLike,
    out_dir: PathLike,
    *,
    shared_data: Optional[str] = None,
    models: Optional[Sequence[str]] = None,
    size_threshold_bytes: Optional[Size] = None,
    align: Optional[Size] = None,
    align_threshold: Optional[Size] = None,
    order: Optional[str] = None,
    checksum: bool = False,
    force: bool = False,
    attributes: bool = True,
    allow_corrupt: bool = False,
    rewrite: bool = False,
    wait: Optional[float] = None,
    progress: Optional[ProgressCallback] = None,
    cancel: Union[None, CancelToken, threading.Event] = None,
) -> dict[str, Any]: ...
def plan(
    model_or_path: Union[Model, ModelSource],
    *,
    output: Optional[PathLike] = None,
    diff: bool = False,
    external_data: Optional[str] = None,
    size_threshold_bytes: Optional[Size] = None,
    align: Optional[Size] = None,
    align_threshold: Optional[Size] = None,
    order: Optional[Literal["declaration", "size"]] = None,
    shard_size: Optional[Size] = None,
    inline: bool = False,
    target: Optional[Literal["ort", "optimum", "web", "hub"]] = None,
    format: Optional[Literal["onnx", "safetensors"]] = None,
    dedupe: bool = False,
    plan: Union[None, PathLike, dict[str, Any]] = None,
    attributes: bool = True,
    allow_corrupt: bool = False,
    compact: Union[None, PathLike, Sequence[PathLike]] = None,
) -> dict[str, Any]: ...
