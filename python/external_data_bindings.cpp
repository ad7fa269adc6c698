// The five external-data operations of SPEC 4 (core/save/external_data.h) as methods of
// Model, under the seed's Python names; the tensor-list ones take Tensor handles or
// onnx.TensorProto objects and give onnx.TensorProto objects back.
#include "errors.h"
#include "proto_payloads.h"
#include "py_model.h"

#include "core/save/external_data.h"

#include <onnx/onnx_pb.h>

#include <pybind11/stl/filesystem.h>

namespace py = pybind11;
namespace fs = std::filesystem;

namespace repack::python {
namespace {

// Copies of the TensorProtos `tensors` names: Tensor handles of model `m` (when given; the
// caller holds it) or onnx.TensorProto objects, external ones relative to `baseDir`. A
// handle's bytes are put inline where the copy could not find them: a payload in the .onnx,
// or data relative to another base directory.
std::vector<onnx::TensorProto> protosOf(
    PyModel* model, const py::iterable& tensors, const fs::path& baseDir)
{
    std::vector<onnx::TensorProto> protos;
    for (py::handle item : tensors) {
        if (py::isinstance<Tensor>(item)) {
            const Tensor& t = item.cast<const Tensor&>();
            if (!model)
                raiseUsage(t.info.qualifiedName()
                    + ": a Tensor handle; use its model's method (Model."
                      "convert_tensors_to_external) or pass onnx.TensorProto objects");
            PyModel& m = *model;
            if (t.owner.get() != &m)
                raiseUsage(t.info.qualifiedName() + ": a Tensor of another model");
            checkCurrent(t);
            check(m.model->loadProtos());
            const TensorInfo& info = m.model->tensors()[t.index];
            if (!info.proto)
                raise(Error::usage(info.qualifiedName() + ": no TensorProto to copy"));
            onnx::TensorProto proto = *info.proto;
            const bool elsewhere = info.isExternal()
                && fs::absolute(baseDir).lexically_normal() != m.model->baseDir();
            if (info.inlineRange || elsewhere) {
                auto bytes = take(m.model->read(t.index));
                proto.set_raw_data(bytes.bytes().data(), bytes.bytes().size());
                proto.clear_external_data();
                proto.clear_data_location();
            }
            protos.push_back(std::move(proto));
        } else if (py::hasattr(item, "SerializeToString")) {
            const std::string wire = item.attr("SerializeToString")().cast<std::string>();
            onnx::TensorProto proto;
            if (!proto.ParseFromString(wire))
                raiseUsage("a tensor that is not an onnx.TensorProto");
            protos.push_back(std::move(proto));
        } else {
            raiseUsage("tensors: expected onnx_repack.Tensor or onnx.TensorProto items");
        }
    }
    return protos;
}

// onnx.TensorProto objects of `protos` (bytes when the onnx module is missing).
py::list protoObjects(const std::vector<onnx::TensorProto>& protos)
{
    py::object tensorClass = py::none();
    try {
        tensorClass = py::module_::import("onnx").attr("TensorProto");
    } catch (const py::error_already_set&) {
    }
    py::list out;
    for (const auto& proto : protos) {
        py::bytes wire(proto.SerializeAsString());
        if (tensorClass.is_none()) {
            out.append(std::move(wire));
            continue;
        }
        py::object object = tensorClass();
        object.attr("ParseFromString")(wire);
        out.append(std::move(object));
    }
    return out;
}

SaveOptions forceOptions(bool force)
{
    SaveOptions options;
    options.force = force;
    return options;
}

// Whether `tensors` are all onnx.TensorProto objects (no Tensor handle; at least one): then
// they are written from their own raw_data, never copied first (python/proto_payloads.h).
bool allTensorProtos(const py::list& tensors)
{
    for (py::handle item : tensors)
        if (py::isinstance<Tensor>(item) || !py::hasattr(item, "DESCRIPTOR")
            || py::str(item.attr("DESCRIPTOR").attr("full_name")).cast<std::string>()
                != "onnx.TensorProto")
            return false;
    return !tensors.empty();
}

// convert_tensors_to_external of onnx.TensorProto objects: the core reads their payloads
// from them as it writes the data file, each read with the GIL held.
py::list lentToExternal(
    const py::list& tensors, const fs::path& dir, const std::string& relativePath, bool force)
{
    const LentPayloads lent = LentPayloads::ofTensors(tensors);
    std::unique_ptr<Model> model = lent.load(dir);
    Result<std::vector<onnx::TensorProto>> out = Error::internal("not run");
    {
        py::gil_scoped_release unlocked;
        out = convertInitializersToExternal(*model, dir, relativePath, forceOptions(force));
    }
    return protoObjects(take(std::move(out)));
}

} // namespace

namespace {

// The tensor-list operations over onnx.TensorProto objects alone, as onnx_ir's module has
// them: no Model needed.
py::list toExternal(
    const py::iterable& tensors, const fs::path& dir, const std::string& relativePath, bool force)
{
    const py::list items(tensors); // a generator is iterated once
    if (allTensorProtos(items))
        return lentToExternal(items, dir, relativePath, force);
    auto protos = protosOf(nullptr, items, dir);
    Result<std::vector<onnx::TensorProto>> out = Error::internal("not run");
    {
        py::gil_scoped_release unlocked;
        out = convertTensorsToExternal(std::move(protos), dir, relativePath, forceOptions(force));
    }
    return protoObjects(take(std::move(out)));
}

py::list fromExternal(const py::iterable& tensors, const fs::path& dir)
{
    auto protos = protosOf(nullptr, tensors, dir);
    Result<std::vector<onnx::TensorProto>> out = Error::internal("not run");
    {
        py::gil_scoped_release unlocked;
        out = convertTensorsFromExternal(std::move(protos), dir);
    }
    return protoObjects(take(std::move(out)));
}

} // namespace

void addExternalDataFunctions(py::module_& m)
{
    // The seed's signatures: the model first, then what the method takes.
    for (const char* name : {"set_base_dir", "load_to_model", "unload_from_model"}) {
        py::object method = m.attr("Model").attr(name);
        m.def(
            name,
            [method](py::object model, py::args args, py::kwargs kwargs) {
                return method(model, *args, **kwargs);
            },
            py::arg("model"),
            (std::string(name) + "(model, ...): Model." + name + " as a function.").c_str());
    }
    m.def("convert_tensors_to_external", &toExternal, py::arg("tensors"), py::arg("base_dir"),
        py::arg("relative_path"), py::arg("force") = false,
        "Writes onnx.TensorProto objects (inline, or external relative to base_dir) into one\n"
        "data file base_dir/relative_path; returns onnx.TensorProto objects referring to it, in\n"
        "input order. An existing file there is replaced only when the tensors read it\n"
        "themselves and no model in its folder does, unless force=True.");
    m.def("convert_tensors_from_external", &fromExternal, py::arg("tensors"), py::arg("base_dir"),
        "In-memory (raw_data) copies of onnx.TensorProto objects whose external data resolves\n"
        "against base_dir.");
}

void addExternalDataOperations(py::class_<PyModel, std::shared_ptr<PyModel>>& model)
{
    model
        .def(
            "set_base_dir",
            [](PyModel& m, const fs::path& path) {
                ModelUse use(m);
                setBaseDir(*use, path);
                ++m.generation;
            },
            py::arg("base_dir"),
            "Resolves every external tensor against base_dir from now on (no bytes move).")
        .def(
            "load_to_model",
            [](PyModel& m) {
                ModelUse use(m);
                Status s;
                {
                    py::gil_scoped_release unlocked;
                    s = loadToModel(*use);
                }
                ++m.generation; // even a failed attempt may have re-read the index
                check(s);
            },
            "Brings every external tensor's bytes into the model (in memory; save() writes\n"
            "it). Fails, changing nothing, past the 2 GiB protobuf limit.")
        .def(
            "unload_from_model",
            [](PyModel& m, const fs::path& dir, const std::string& relativePath, uint64_t threshold,
                bool force) {
                ModelUse use(m);
                Status s;
                {
                    py::gil_scoped_release unlocked;
                    s = unloadFromModel(*use, dir, relativePath, threshold, forceOptions(force));
                }
                ++m.generation;
                check(s);
            },
            py::arg("base_dir"), py::arg("relative_path"),
            py::arg("size_threshold_bytes") = uint64_t(0), py::arg("force") = false,
            "Writes every tensor of at least size_threshold_bytes (default 0, as onnx_ir: every\n"
            "tensor with bytes) into base_dir/relative_path\n"
            "and points the model at it (base directory base_dir); smaller external tensors\n"
            "come back inline. The .onnx is not written: save() does that. A file there that\n"
            "other models read, or that this model does not, is replaced only with force=True.")
        .def(
            "convert_tensors_to_external",
            [](PyModel& m, const py::iterable& tensors, const fs::path& dir,
                const std::string& relativePath, bool force) {
                ModelUse use(m);
                const py::list items(tensors); // a generator is iterated once
                if (allTensorProtos(items))
                    return lentToExternal(items, dir, relativePath, force);
                auto protos = protosOf(&m, items, dir);
                Result<std::vector<onnx::TensorProto>> out = Error::internal("not run");
                {
                    py::gil_scoped_release unlocked;
                    out = convertTensorsToExternal(
                        std::move(protos), dir, relativePath, forceOptions(force));
                }
                return protoObjects(take(std::move(out)));
            },
            py::arg("tensors"), py::arg("base_dir"), py::arg("relative_path"),
            py::arg("force") = false,
            "Writes tensors (Tensor handles of this model, or onnx.TensorProto inline or\n"
            "external relative to base_dir) into one data file base_dir/relative_path; returns\n"
            "onnx.TensorProto objects referring to it, in input order. The model is unchanged.")
        .def(
            "convert_tensors_from_external",
            [](PyModel& m, const py::iterable& tensors) {
                ModelUse use(m);
                const fs::path dir = m.model->baseDir();
                auto protos = protosOf(&m, tensors, dir);
                Result<std::vector<onnx::TensorProto>> out = Error::internal("not run");
                {
                    py::gil_scoped_release unlocked;
                    out = convertTensorsFromExternal(std::move(protos), dir);
                }
                return protoObjects(take(std::move(out)));
            },
            py::arg("tensors"),
            "In-memory (raw_data) onnx.TensorProto copies of tensors (Tensor handles of this\n"
            "model, or onnx.TensorProto external relative to the model's base directory).");
}

} // namespace repack::python
