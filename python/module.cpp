// The onnx_repack extension module: the crash-safe, streaming save of Onnx Repack for the
// scripts that make external data (onnx, torch.onnx.export, onnx_ir), over the core only.
#include "errors.h"
#include "py_model.h"

#include "cli/cli.h"

#include <pybind11/stl.h>

#include <iostream>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

// The onnx-repack executable's run(), for `python -m onnx_repack` (onnx_repack/__main__.py).
int runCli(const std::vector<std::string>& args)
{
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    argv.push_back(nullptr);
    int code = 0;
    {
        py::gil_scoped_release unlocked;
        code = repack::cli::run(static_cast<int>(args.size()), argv.data());
    }
    std::cout.flush();
    std::cerr.flush();
    return code;
}

} // namespace

// onnx_repack._core: the package onnx_repack (python/onnx_repack/__init__.py) re-exports it.
PYBIND11_MODULE(_core, m)
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
    m.def("_run_cli", &runCli, py::arg("argv"),
        "Runs the onnx-repack command line with argv (argv[0] is the program's name); returns "
        "its exit code.");
}
