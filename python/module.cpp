// The onnx_repack extension module: the crash-safe, streaming save of Onnx Repack for the
// scripts that make external data (onnx, torch.onnx.export, onnx_ir), over the core only.
#include "errors.h"
#include "py_model.h"

namespace py = pybind11;

PYBIND11_MODULE(onnx_repack, m)
{
    m.doc() = "Inspect and safely rewrite where ONNX models keep their weights.\n\n"
              "load(path) opens a model lazily (Model.tensors, Tensor.numpy() zero-copy);\n"
              "save(model_or_path, out_path, **options) rewrites storage crash-safely with the\n"
              "options of `onnx-repack repack`; verify, diff and plan return the documents of\n"
              "the CLI's --json; save_proto writes an onnx.ModelProto. See docs/python.md.";
    m.attr("__version__") = REPACK_VERSION;
    repack::python::registerErrors(m);
    repack::python::registerModel(m);
    repack::python::addExternalDataFunctions(m);
    repack::python::registerSave(m);
    repack::python::registerReports(m);
}
