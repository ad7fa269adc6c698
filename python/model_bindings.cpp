// onnx_repack.load, Model and Tensor: the lazy model, its tensors, and numpy views over the
// mapped bytes that never copy and never read bytes that are no longer the tensor's.
#include "errors.h"
#include "py_model.h"
#include "save_watch.h"

#include "core/dtype.h"
#include "core/inspect/audit.h"
#include "core/inspect/folder_scan.h"
#include "core/inspect/report.h"
#include "core/json_stream.h"
#include "core/plan/file_layout.h"
#include "core/plan/targets.h"
#include "core/remote/model_source.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <chrono>
#include <cstring>
#include <future>
#include <optional>

namespace py = pybind11;
namespace fs = std::filesystem;

namespace repack::python {
namespace {

// The numpy dtype of an ONNX element type, little-endian as raw_data; empty where numpy has
// none (bfloat16, the float8 and 4-bit types, strings).
std::string numpyType(int32_t type)
{
    switch (type) {
    case dtype::Float:
        return "<f4";
    case dtype::Uint8:
        return "|u1";
    case dtype::Int8:
        return "|i1";
    case dtype::Uint16:
        return "<u2";
    case dtype::Int16:
        return "<i2";
    case dtype::Int32:
        return "<i4";
    case dtype::Int64:
        return "<i8";
    case dtype::Bool:
        return "|b1";
    case dtype::Float16:
        return "<f2";
    case dtype::Double:
        return "<f8";
    case dtype::Uint32:
        return "<u4";
    case dtype::Uint64:
        return "<u8";
    case dtype::Complex64:
        return "<c8";
    case dtype::Complex128:
        return "<c16";
    default:
        return {};
    }
}

Tensor tensorOf(const std::shared_ptr<PyModel>& owner, size_t index)
{
    Tensor t{owner, index, owner->generation, owner->model->tensors()[index]};
    t.info.proto = nullptr;
    t.info.external->dropFile();
    return t;
}

py::object dtypeOf(const TensorInfo& info)
{
    const std::string type = numpyType(info.dataType);
    if (!type.empty())
        return py::dtype(type);
    const auto name = dtype::name(info.dataType);
    return py::str(name ? std::string(*name) : "undefined(" + std::to_string(info.dataType) + ")");
}

// The mapping of the .onnx file the model reads its in-file payloads from, our own, so that an
// array keeps it after a save drops the model's.
std::shared_ptr<DataFile> modelFileMapping(PyModel& m)
{
    const FileIdentity& id = m.model->fileIdentity();
    if (!m.modelFile || !(m.mappedId == id)) {
        m.modelFile = std::make_shared<DataFile>(m.model->path(), id);
        m.mappedId = id;
    }
    return m.modelFile;
}

// A read-only array over `bytes` that keeps `keepAlive` (the mapping) as its base.
py::array viewArray(const py::dtype& type, const std::vector<py::ssize_t>& shape,
    std::span<const std::byte> bytes, std::shared_ptr<DataFile> keepAlive)
{
    auto* holder = new std::shared_ptr<DataFile>(std::move(keepAlive));
    py::capsule base(holder, [](void* p) { delete static_cast<std::shared_ptr<DataFile>*>(p); });
    py::array array(type, shape, {}, bytes.data(), base);
    array.attr("setflags")(py::arg("write") = false);
    return array;
}

py::array numpyOf(const Tensor& t)
{
    checkCurrent(t);
    ModelUse model(*t.owner);
    const TensorInfo& info = model->tensors()[t.index];
    if (info.dataType == dtype::String)
        raise(Error::usage(
            info.qualifiedName() + ": a STRING tensor has no fixed-size bytes to view"));
    if (!info.bytes || !info.elements())
        raise(Error::usage(info.qualifiedName() + ": its size is unknown (see model.problems)"));
    const std::string type = numpyType(info.dataType);
    std::vector<py::ssize_t> shape;
    if (type.empty()) {
        shape.push_back(static_cast<py::ssize_t>(*info.bytes)); // packed bytes as they are
    } else {
        for (int64_t d : info.shape)
            shape.push_back(static_cast<py::ssize_t>(d));
    }
    const py::dtype dt(type.empty() ? std::string("|u1") : type);
    Result<TensorBytes> read = Error::internal("not run");
    {
        py::gil_scoped_release unlocked; // mapping a file can wait on the disk
        read = model->read(t.index);
    }
    const TensorBytes held = take(std::move(read)); // owns converted typed bytes
    const std::span<const std::byte> bytes = held.bytes();
    if (bytes.size() != *info.bytes)
        raise(Error::corrupt(info.qualifiedName() + ": " + std::to_string(bytes.size())
            + " bytes where its dtype and shape need " + std::to_string(*info.bytes)));
    // A remote model's bytes come from the block cache, not a mapping the array could keep.
    if (info.isExternal() && info.external->file() && !model->isRemote())
        return viewArray(dt, shape, bytes, info.external->file());
    if (info.inlineRange && !t.owner->model->path().empty()) {
        auto file = modelFileMapping(*t.owner);
        auto view = take(file->view(info.inlineRange->offset, info.inlineRange->length));
        return viewArray(dt, shape, view, std::move(file));
    }
    // Bytes parsed into the model (small payloads, typed fields, an in-memory model) or read
    // from a server (a remote model's): a copy,
    // since the protos they live in change with the model.
    py::array array(dt, shape);
    std::memcpy(array.mutable_data(), bytes.data(), bytes.size());
    array.attr("setflags")(py::arg("write") = false);
    return array;
}

py::object orNone(bool present, py::object value)
{
    return present ? std::move(value) : py::none();
}

py::dict problemDict(const Problem& p)
{
    py::dict d;
    d["severity"] = std::string(severityName(p.severity));
    d["tensor"] = p.tensor;
    d["code"] = p.code;
    d["message"] = p.message;
    return d;
}

std::string_view regionName(RegionType type)
{
    switch (type) {
    case RegionType::Tensor:
        return "tensor";
    case RegionType::Padding:
        return "padding";
    case RegionType::Orphaned:
        return "orphaned";
    case RegionType::Overlap:
        return "overlap";
    case RegionType::Header:
        return "header";
    }
    return "tensor";
}

py::list layoutOf(const Model& model)
{
    py::list files;
    for (const FileLayout& f : computeLayout(model, kDefaultAlignment)) {
        py::list regions;
        for (const Region& r : f.regions) {
            py::dict region;
            region["type"] = std::string(regionName(r.type));
            region["offset"] = r.offset;
            region["length"] = r.length;
            region["tensor"] = r.tensor >= 0 ? py::object(py::str(
                                   model.tensors()[static_cast<size_t>(r.tensor)].qualifiedName()))
                                             : py::none();
            region["shared"] = r.shared;
            regions.append(std::move(region));
        }
        py::dict file;
        file["location"] = f.location;
        file["path"] = f.path.string();
        file["bytes"] = f.bytes;
        file["referenced_bytes"] = f.referencedBytes;
        file["padding_bytes"] = f.paddingBytes;
        file["orphaned_bytes"] = f.orphanedBytes;
        file["overlapping_bytes"] = f.overlappingBytes;
        file["shared_bytes"] = f.sharedBytes;
        file["header_bytes"] = f.headerBytes;
        file["alignment"] = f.alignment;
        file["regions"] = std::move(regions);
        files.append(std::move(file));
    }
    return files;
}

py::object inspectOf(PyModel& m, bool deep, const std::string& target)
{
    AuditOptions audit{.compareBytes = deep};
    if (!target.empty()) {
        const Target* found = findTarget(target);
        if (!found)
            raiseUsage("target: '" + target + "' is not a target (one of " + targetNames() + ")");
        audit.alignment = found->alignment;
    }
    ModelUse model(m);
    std::string text;
    {
        py::gil_scoped_release unlocked; // the folder scan and --deep read files
        // The folder's housekeeping and the storage audit, as `inspect` adds them: warnings.
        std::vector<Problem> folderProblems = housekeepingProblems(*model);
        for (auto& p : auditModel(*model, audit))
            folderProblems.push_back(std::move(p));
        text = jsonText(inspectJson(*model, folderProblems, audit.alignment));
    }
    return fromJson(text);
}

} // namespace

ModelUse::ModelUse(PyModel& m)
    : m_model(m)
{
    if (m.busy.exchange(true))
        raise(Error{m.model->path().string()
                + ": this Model is in use by another thread (a save); use it after that ends",
            ErrorKind::Busy});
}

void checkCurrent(const Tensor& t)
{
    if (t.generation != t.owner->generation)
        raise(Error{t.info.qualifiedName()
                + ": this Tensor handle was taken before the model was saved or changed; read "
                  "model.tensors again (arrays from numpy() taken before stay valid)",
            ErrorKind::Changed});
}

fs::path toPath(py::handle path)
{
    py::object text = py::module_::import("os").attr("fspath")(path);
    if (py::isinstance<py::bytes>(text))
        return fs::path(text.cast<std::string>());
    return fs::path(text.cast<std::string>());
}

bool ModelArgument::isRemote() const
{
    return !pathOnly && namesRemoteModel(text);
}

ModelArgument modelArgument(py::handle pathOrUrl)
{
    if (py::isinstance<py::str>(pathOrUrl))
        return {pathOrUrl.cast<std::string>(), false};
    return {toPath(pathOrUrl).string(), true};
}

// A model read from a server, opened on a thread of its own while this one (Python's main
// thread, where signals are handled) checks for them (SaveWatch): a fetch that stalls calls no
// progress callback, yet Ctrl+C stops it. What a signal raised is raised here.
Result<std::unique_ptr<Model>> openInterruptibly(const std::string& text)
{
    SaveWatch watch{py::none(), py::none()};
    auto model = watch.run([&] { return openModelArgument(text, watch.token()); });
    watch.raisePending();
    return model;
}

std::shared_ptr<PyModel> loadModel(const ModelArgument& argument)
{
    if (argument.isRemote())
        return std::make_shared<PyModel>(take(openInterruptibly(argument.text)));
    Result<std::unique_ptr<Model>> model = Error::internal("not run");
    {
        py::gil_scoped_release unlocked;
        model = argument.pathOnly ? Model::load(argument.text) : openModelArgument(argument.text);
    }
    return std::make_shared<PyModel>(take(std::move(model)));
}

std::shared_ptr<PyModel> modelOf(py::handle modelOrPath)
{
    if (py::isinstance<PyModel>(modelOrPath))
        return modelOrPath.cast<std::shared_ptr<PyModel>>();
    return loadModel(modelArgument(modelOrPath));
}

py::object fromJson(const std::string& text)
{
    return py::module_::import("json").attr("loads")(py::str(text));
}

namespace {

void registerTensor(py::module_& m)
{
    py::class_<Tensor>(m, "Tensor",
        "One tensor of a loaded model: where it sits (scope, kind) and where its bytes live.\n\n"
        "The attributes are a snapshot taken when Model.tensors was read. numpy() views the\n"
        "bytes without copying; after the model is saved or changed, this handle raises\n"
        "onnx_repack.Error (kind 'changed') instead of reading: read model.tensors again.")
        .def_property_readonly("name", [](const Tensor& t) { return t.info.name; })
        .def_property_readonly(
            "scope", [](const Tensor& t) { return t.info.scope.str(); },
            "'graph', 'graph/<node>/<attribute>' for subgraphs, 'function:<domain>:<name>'")
        .def_property_readonly(
            "kind", [](const Tensor& t) { return std::string(kindName(t.info.kind)); },
            "'initializer', 'attribute' or 'sparse'")
        .def_property_readonly(
            "dtype", [](const Tensor& t) { return dtypeOf(t.info); },
            "numpy.dtype where numpy has one, else the ONNX name ('bfloat16', 'float8e4m3fn')")
        .def_property_readonly("shape",
            [](const Tensor& t) {
                py::tuple shape(t.info.shape.size());
                for (size_t i = 0; i < t.info.shape.size(); ++i)
                    shape[i] = t.info.shape[i];
                return shape;
            })
        .def_property_readonly(
            "nbytes",
            [](const Tensor& t) {
                return orNone(t.info.bytes.has_value(), py::int_(t.info.byteSize()));
            },
            "packed byte size (None when dims are invalid); strings: the sum of their lengths")
        .def_property_readonly(
            "storage", [](const Tensor& t) { return t.info.isExternal() ? "external" : "inline"; })
        .def_property_readonly("location",
            [](const Tensor& t) {
                return orNone(t.info.isExternal(), py::str(t.info.external->location()));
            })
        .def_property_readonly("offset",
            [](const Tensor& t) {
                return orNone(t.info.isExternal(), py::int_(t.info.external->offset));
            })
        .def_property_readonly("length",
            [](const Tensor& t) {
                return orNone(t.info.isExternal(),
                    py::int_(t.info.external->length.value_or(t.info.byteSize())));
            })
        .def_property_readonly("checksum",
            [](const Tensor& t) {
                return orNone(
                    !t.info.external->checksum->empty(), py::str(*t.info.external->checksum));
            })
        .def("numpy", &numpyOf,
            "A read-only numpy array over the tensor's bytes, without copying: a view of the\n"
            "mapped data file (or of the .onnx for inline payloads of 1 KiB and more); pages\n"
            "are read when touched. The array keeps its mapping: it stays valid, with the bytes\n"
            "it was taken with, after the model is saved over those files. Types numpy lacks\n"
            "(bfloat16, float8, int4, ...) come as their packed bytes (uint8, 1-D).\n"
            "Raises Error when the tensor cannot be read (see model.problems), or kind\n"
            "'changed' when this handle outlived a save.")
        .def("__repr__", [](const Tensor& t) {
            std::string where = t.info.isExternal()
                ? t.info.external->location() + "@" + std::to_string(t.info.external->offset)
                : "inline";
            return "<onnx_repack.Tensor " + t.info.qualifiedName() + " "
                + py::str(dtypeOf(t.info)).cast<std::string>() + " "
                + std::to_string(t.info.byteSize()) + " bytes " + where + ">";
        });
}

// Model, with the external-data operations (external_data_bindings.cpp) among its methods.
void registerModelClass(py::module_& m)
{
    py::class_<PyModel, std::shared_ptr<PyModel>> model(m, "Model",
        "A loaded ONNX model: its tensors and where their bytes live. Loading reads no weight\n"
        "bytes; numpy() maps them on demand. save() and the external-data operations change\n"
        "it, after which it describes the new layout and older Tensor handles refuse to read.");
    model
        .def_property_readonly(
            "path", [](PyModel& m) { return m.model->origin(); },
            "the model's file; a model that is not a local file: its URL, without secrets")
        .def_property_readonly(
            "base_dir", [](PyModel& m) { return m.model->baseDir().string(); },
            "the folder external data locations resolve against")
        .def_property_readonly(
            "tensors",
            [](const std::shared_ptr<PyModel>& m) {
                ModelUse use(*m);
                std::vector<Tensor> tensors;
                tensors.reserve(m->model->tensors().size());
                for (size_t i = 0; i < m->model->tensors().size(); ++i)
                    tensors.push_back(tensorOf(m, i));
                return tensors;
            },
            "every tensor that carries data, in declaration order")
        .def_property_readonly(
            "problems",
            [](PyModel& m) {
                ModelUse use(m);
                py::list out;
                for (const Problem& p : use->problems())
                    out.append(problemDict(p));
                return out;
            },
            "what validation found: [{'severity', 'tensor', 'code', 'message'}]")
        .def(
            "layout",
            [](PyModel& m) {
                ModelUse use(m);
                return layoutOf(*use);
            },
            "Per data file, as `onnx-repack inspect` shows it: {'location', 'path', 'bytes',\n"
            "'referenced_bytes', 'padding_bytes', 'orphaned_bytes', 'overlapping_bytes',\n"
            "'shared_bytes', 'header_bytes', 'regions': [{'type', 'offset', 'length', 'tensor',\n"
            "'shared'}]}; type is tensor, padding, orphaned, overlap or header.")
        .def("inspect", &inspectOf, py::arg("deep") = false, py::arg("target") = "",
            "The document of `onnx-repack inspect --json` (schema onnx-repack/inspect/1), with\n"
            "the folder's housekeeping and the storage audit; deep=True also reads weights to\n"
            "find duplicate copies, target= audits for a target's readers.")
        .def("__repr__", [](PyModel& m) {
            return "<onnx_repack.Model " + m.model->origin() + ", "
                + std::to_string(m.model->tensors().size()) + " tensors>";
        });
    addExternalDataOperations(model);
}

void registerLoad(py::module_& m)
{
    m.def(
        "load", [](py::handle path) { return loadModel(modelArgument(path)); }, py::arg("path"),
        "Opens an ONNX model without reading its weights (the .onnx is mapped and indexed).\n"
        "path: a path (str or os.PathLike), or a str naming a model that is not a local file,\n"
        "as the CLI takes it: http(s)://HOST/PATH, hf://ORG/REPO[@REV]/PATH, s3://BUCKET/KEY\n"
        "(its structure is fetched without its weights; numpy() reads a tensor's bytes from\n"
        "the server). Raises Error when the model cannot be read or is not an ONNX model (a\n"
        "URL's errors name it without secrets); broken tensor references are listed in\n"
        "Model.problems and the model still opens.");
}

} // namespace

void registerModel(py::module_& m)
{
    registerTensor(m); // first: the Model's signatures name Tensor
    registerModelClass(m);
    registerLoad(m);
}

} // namespace repack::python
