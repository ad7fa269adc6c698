// What the Python objects share: a loaded model, the count of changes that invalidate Tensor
// handles, and the guard that keeps two threads from using one model while a save runs with
// the GIL released.
#pragma once

#include "core/model/model.h"

#include <pybind11/pybind11.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

namespace repack::python {

struct PyModel {
    explicit PyModel(std::unique_ptr<Model> m)
        : model(std::move(m))
    {
    }
    std::unique_ptr<Model> model;
    // Bumped by every save and operation that changes where tensors live: a Tensor handle
    // taken before refuses to read (its offsets may name bytes that are no longer its own).
    uint64_t generation = 0;
    std::atomic<bool> busy{false};
    // Our own mapping of the .onnx for views of the payloads it holds (a numpy array keeps it
    // alive; the Model's own mapping goes with the next save), for the file with `mappedId`.
    std::shared_ptr<DataFile> modelFile;
    FileIdentity mappedId;
};

// One tensor of a model as it was when model.tensors was read. Its place (storage, location,
// offset) is a snapshot; numpy() reads only while the model has not changed since.
struct Tensor {
    std::shared_ptr<PyModel> owner;
    size_t index = 0;
    uint64_t generation = 0;
    TensorInfo info; // a copy without the pointers that matter (proto, data file)
};

// Raises Error of kind Changed when the model changed since `t` was taken.
void checkCurrent(const Tensor& t);

// Holds a model for one call; raises Busy while another thread uses it (a save releases the
// GIL, so without this a second thread could read a model that is being rewritten).
class ModelUse {
public:
    explicit ModelUse(PyModel& m);
    ~ModelUse() { m_model.busy.store(false); }
    ModelUse(const ModelUse&) = delete;
    ModelUse& operator=(const ModelUse&) = delete;
    Model& operator*() const { return *m_model.model; }
    Model* operator->() const { return m_model.model.get(); }

private:
    PyModel& m_model;
};

// Accepts a str or os.PathLike.
std::filesystem::path toPath(pybind11::handle path);

// What a str or os.PathLike names as a model: a str as the CLI's MODEL takes it (a path, an
// http(s):// address, hf://ORG/REPO[@REV]/PATH or s3://BUCKET/KEY: core/remote/model_source.h),
// an os.PathLike (or bytes) as a path, whatever it reads.
struct ModelArgument {
    std::string text;
    bool pathOnly = false;
    bool isRemote() const;
};
ModelArgument modelArgument(pybind11::handle pathOrUrl);

// The model `argument` names, loaded (a file) or opened (a URL) with the GIL released; raises
// on failure, the message naming the URL without its secrets.
std::shared_ptr<PyModel> loadModel(const ModelArgument& argument);

// The model `modelOrPath` names: a Model, or a path or URL loaded now.
std::shared_ptr<PyModel> modelOf(pybind11::handle modelOrPath);

// Parses a JSON text into Python objects with the json module.
pybind11::object fromJson(const std::string& text);

void registerModel(pybind11::module_& m);
// The five operations of SPEC 4 as methods of Model (external_data_bindings.cpp).
void addExternalDataOperations(pybind11::class_<PyModel, std::shared_ptr<PyModel>>& model);
// The same as module functions, the model first (SPEC 4's signatures), and the tensor-list
// ones over onnx.TensorProto objects alone. After registerModel.
void addExternalDataFunctions(pybind11::module_& m);
void registerSave(pybind11::module_& m);
void registerReports(pybind11::module_& m);

} // namespace repack::python
