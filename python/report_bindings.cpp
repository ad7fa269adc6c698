// onnx_repack.verify, diff and plan: the documents of their `--json` output, built by the same
// core functions the CLI prints, parsed with the json module.
#include "errors.h"
#include "layout_kwargs.h"
#include "py_model.h"
#include "save_watch.h"

#include "core/inspect/diff.h"
#include "core/inspect/folder_inspect.h"
#include "core/inspect/folder_scan.h"
#include "core/inspect/plan_diff.h"
#include "core/inspect/report.h"
#include "core/inspect/verify.h"
#include "core/plan/placement_plan.h"
#include "core/plan/save_plan.h"
#include "core/remote/model_source.h"

#include <sstream>

namespace py = pybind11;
namespace fs = std::filesystem;

namespace repack::python {
namespace {

py::object verifyPy(py::handle modelOrPath)
{
    auto owner = modelOf(modelOrPath);
    ModelUse model(*owner);
    std::ostringstream out;
    // Reading every byte of a remote model may wait on its server: Ctrl+C stops it.
    SaveWatch watch{py::none(), py::none()};
    watch.run([&] {
        VerifyOptions options;
        options.cancel = watch.token();
        std::vector<Problem> problems = verify(*model, options);
        for (auto& p : housekeepingProblems(*model)) // warnings, as `verify` adds them
            problems.push_back(std::move(p));
        writeVerifyJson(out, *model, problems);
    });
    watch.raisePending();
    return fromJson(out.str());
}

py::object diffPy(py::handle a, py::handle b)
{
    auto ownerA = modelOf(a);
    auto ownerB = modelOf(b);
    ModelUse modelA(*ownerA);
    std::optional<ModelUse> modelB;
    if (ownerB != ownerA)
        modelB.emplace(*ownerB);
    std::ostringstream out;
    Result<std::vector<DiffEntry>> entries = Error::internal("not run");
    {
        py::gil_scoped_release unlocked;
        entries = diffModels(*ownerA->model, *ownerB->model);
        if (entries)
            writeDiffJson(out, *ownerA->model, *ownerB->model, *entries);
    }
    take(std::move(entries));
    return fromJson(out.str());
}

py::object planPy(py::handle modelOrPath, py::object output, bool diff, py::object externalData,
    py::object threshold, py::object align, py::object alignThreshold, py::object order,
    py::object shardSize, bool allInline, py::object target, py::object format, bool dedupe,
    py::object plan, bool attributes, bool allowCorrupt, py::object compact)
{
    const LayoutKwargs layout{externalData, threshold, align, alignThreshold, order, shardSize,
        target, format, plan, allInline, dedupe, attributes, allowCorrupt, std::move(compact)};
    // Options first (a usage error before anything is read), for the output they name: the
    // model's own path unless told otherwise, as `onnx-repack plan`.
    const bool loaded = py::isinstance<PyModel>(modelOrPath);
    if (output.is_none()
        && (loaded ? modelOrPath.cast<PyModel&>().model->isRemote()
                   : modelArgument(modelOrPath).isRemote()))
        raiseUsage("plan: output= names the model a save would write (the model read is not a "
                   "local file)");
    const fs::path outputModel = !output.is_none() ? toPath(output)
        : loaded                                   ? modelOrPath.cast<PyModel&>().model->path()
                                                   : toPath(modelOrPath);
    SaveOptions options = requestedOptions(layoutRequest(layout), outputModel);
    auto owner = modelOf(modelOrPath);
    applyPlan(plan, *owner->model, options);
    ModelUse model(*owner);
    std::ostringstream text;
    Result<SavePlan> planned = Error::internal("not run");
    {
        py::gil_scoped_release unlocked;
        planned = planSave(*model, outputModel, options);
        if (planned && diff)
            writePlanDiffJson(text, diffPlan(*model, *planned));
        else if (planned)
            writePlanJson(text, *model, *planned, outputModel);
    }
    take(std::move(planned));
    return fromJson(text.str());
}

py::object inspectFolderPy(py::handle dir)
{
    const ModelArgument folderName = modelArgument(dir); // a path, or a Hub folder's hf:// name
    std::ostringstream out;
    Result<FolderInspection> folder = Error::internal("not run");
    // A Hub folder's listing and graphs wait on the Hub: Ctrl+C stops them.
    SaveWatch watch{py::none(), py::none()};
    watch.run([&] {
        FolderInspectOptions options;
        options.cancel = watch.token();
        folder = folderName.isRemote() ? inspectRemoteFolder(folderName.text, options)
                                       : inspectFolder(folderName.text, options);
        if (folder)
            writeFolderJson(out, *folder);
    });
    watch.raisePending();
    take(std::move(folder));
    return fromJson(out.str());
}

} // namespace

void registerReports(py::module_& m)
{
    py::options options; // signatures written in the docstrings, without pybind11's types
    options.disable_function_signatures();
    m.def("verify", &verifyPy, py::arg("model_or_path"),
        "verify(model_or_path) -> dict\n\n"
        "model_or_path: a Model, or a path or URL as load() takes it.\n"
        "Reads every external byte range (bounded memory) and checks sizes and checksums: the\n"
        "document of `onnx-repack verify --json` (schema onnx-repack/verify/1, 'ok' says\n"
        "whether no error was found). Raises Error when the model cannot be read at all.");
    m.def("inspect_folder", &inspectFolderPy, py::arg("dir"),
        "inspect_folder(dir) -> dict\n\n"
        "A folder of graphs as one unit: the document of `onnx-repack inspect DIR --json`\n"
        "(schema onnx-repack/folder/1): every model with its tensors, bytes, data files and the\n"
        "loaders that accept it; every data file and the models that read it ('used_by'); the\n"
        "weights stored more than once across the graphs ('shared', 'duplicated_bytes'); the\n"
        "folder's problems. dir may be a folder of a Hub repository, hf://ORG/REPO[@REV]/DIR\n"
        "(listed once, every graph read at one commit, the data files sized from the listing).\n"
        "Raises FileNotFoundError when dir is no folder.");
    m.def("diff", &diffPy, py::arg("a"), py::arg("b"),
        "diff(a, b) -> dict\n\n"
        "Compares two models (paths or Models) tensor by tensor, matched by scope + name: the\n"
        "document of `onnx-repack diff --json` (schema onnx-repack/diff/1): added, removed,\n"
        "moved, storage_changed, content_changed, unchanged. Content is compared by bytes.");
    m.def("plan", &planPy, py::arg("model_or_path"), py::kw_only(), py::arg("output") = py::none(),
        py::arg("diff") = false, py::arg("external_data") = py::none(),
        py::arg("size_threshold_bytes") = py::none(), py::arg("align") = py::none(),
        py::arg("align_threshold") = py::none(), py::arg("order") = py::none(),
        py::arg("shard_size") = py::none(), py::arg("inline") = false,
        py::arg("target") = py::none(), py::arg("format") = py::none(), py::arg("dedupe") = false,
        py::arg("plan") = py::none(), py::arg("attributes") = true,
        py::arg("allow_corrupt") = false, py::arg("compact") = py::none(),
        "plan(model_or_path, *, output=None, diff=False, **layout options of save()) -> dict\n\n"
        "Where a save with these layout options (as save() takes them) would put every\n"
        "tensor, writing nothing: the document of `onnx-repack plan --json` (schema\n"
        "onnx-repack/plan/1, a plan save(plan=...) accepts), or with diff=True what would\n"
        "change (onnx-repack/plan-diff/1). output: the model a save would write (default the\n"
        "model's own path), which names the default data file.");
}

} // namespace repack::python
