// onnx_repack.save and save_proto: the core's crash-safe save with the GIL released, progress
// called back a few times a second, and Ctrl+C (also while a server is silent) or an exception
// in the callback cancelling it through the core's CancelToken (nothing on disk changes) before
// being raised again (save_watch.h).
#include "errors.h"
#include "layout_kwargs.h"
#include "proto_payloads.h"
#include "py_model.h"
#include "save_watch.h"

#include "core/inspect/folder_inspect.h"
#include "core/remote/model_source.h"
#include "core/save/folder_save.h"
#include "core/save/output_folder.h"
#include "core/save/save.h"
#include "core/save/save_conflicts.h"

#include <pybind11/stl.h>

#include <optional>

namespace py = pybind11;
namespace fs = std::filesystem;

namespace repack::python {
namespace {

struct SaveReportPy {
    SaveReport report;
};

// The conflicts that made a save ask for consent, for ConsentRequired.conflicts.
py::list conflictsOf(const Model& model, const fs::path& out, const SaveOptions& options)
{
    py::list list;
    auto conflicts = saveConflicts(model, out, options);
    if (!conflicts)
        return list;
    for (const SaveConflict& c : *conflicts) {
        py::list users;
        for (const auto& user : c.users)
            users.append(user.string());
        py::dict d;
        d["file"] = c.file.string();
        d["users"] = std::move(users);
        d["message"] = inPythonTerms(c.message);
        list.append(std::move(d));
    }
    return list;
}

struct SaveArgs {
    LayoutKwargs layout;
    bool checksum = false, force = false, removeUnused = false, rewrite = false;
    py::object wait, progress, cancel;
};

SaveRequest saveRequest(const SaveArgs& args)
{
    SaveRequest request = layoutRequest(args.layout);
    request.checksum = args.checksum;
    request.force = args.force;
    request.removeUnused = args.removeUnused;
    request.rewrite = args.rewrite;
    if (!args.wait.is_none()) { // the core's rule, as the CLI's --wait (a bool is no number)
        request.wait = py::str(args.wait).cast<std::string>();
        if (request.wait.empty()) // the request's "not given": refused in the core's words
            take(parseLockWait(request.wait, "wait"));
    }
    return request;
}

SaveOptions saveOptions(const SaveArgs& args, const fs::path& out)
{
    return requestedOptions(saveRequest(args), out);
}

// Saves the model `owner` holds (loaded again from `input` when it changed meanwhile and the
// caller gave a path, as the CLI does), or raises; the originals are untouched on failure.
SaveReportPy saveModel(std::shared_ptr<PyModel> owner, const std::optional<ModelArgument>& input,
    const fs::path& out, SaveArgs& args, SaveOptions options)
{
    SaveWatch watch(args.progress, args.cancel);
    options.progress = watch.callback();
    options.cancel = watch.token();
    const auto created = createOutputFolders(out);
    if (!created)
        raise(created.error());
    // A model loaded from `input` is read again when another save changed it meanwhile (the
    // core's retry); a Model object or a proto is saved once.
    const auto attempt = [&](bool again) -> Result<SaveReport> {
        if (again)
            owner = loadModel(*input);
        options.placements.clear(); // read again for the model as it is now
        applyPlan(args.layout.plan, *owner->model, options);
        ModelUse model(*owner);
        return watch.run([&] { return save(*model, out, options); });
    };
    Result<SaveReport> report = Error::internal("not run");
    try {
        report = saveRetrying(attempt, input.has_value());
    } catch (...) {
        removeCreatedFolders(*created);
        throw;
    }
    if (!report) {
        removeCreatedFolders(*created);
        watch.raisePending();
        if (report.error().is(ErrorKind::ConsentNeeded))
            raise(report.error(), conflictsOf(*owner->model, out, options));
        raise(report.error());
    }
    ++owner->generation; // tensors now live elsewhere: older handles refuse to read
    watch.raisePending(); // Ctrl+C after the last chunk: the save is complete, say so after
    return SaveReportPy{std::move(*report)};
}

bool isModelProto(py::handle object)
{
    return py::hasattr(object, "SerializeToString") && py::hasattr(object, "graph");
}

// Saves an onnx.ModelProto, its external tensors resolved against `baseDir` (default: the
// folder of `out`), streamed: the core reads its large payloads from the proto as it writes
// them (python/proto_payloads.h); the proto is never changed.
SaveReportPy saveProto(
    py::handle proto, const fs::path& out, py::handle baseDir, SaveArgs& args, SaveOptions options)
{
    const fs::path base
        = baseDir.is_none() ? fs::absolute(out).parent_path() : fs::path(toPath(baseDir));
    const LentPayloads lent = LentPayloads::ofModel(proto);
    return saveModel(
        std::make_shared<PyModel>(lent.load(base)), std::nullopt, out, args, std::move(options));
}

SaveArgs saveArgs(py::object externalData, py::object threshold, py::object align,
    py::object alignThreshold, py::object order, py::object shardSize, bool checksum,
    bool allInline, py::object target, py::object format, bool dedupe, py::object plan, bool force,
    py::object progress, py::object cancel, bool attributes, bool allowCorrupt, bool removeUnused,
    bool rewrite, py::object wait, py::object compact)
{
    SaveArgs args;
    args.layout = {externalData, threshold, align, alignThreshold, order, shardSize, target, format,
        plan, allInline, dedupe, attributes, allowCorrupt, std::move(compact)};
    args.checksum = checksum;
    args.force = force;
    args.removeUnused = removeUnused;
    args.rewrite = rewrite;
    args.wait = std::move(wait);
    args.progress = std::move(progress);
    args.cancel = std::move(cancel);
    if (!args.progress.is_none() && !PyCallable_Check(args.progress.ptr()))
        raiseUsage("progress: expected a callable (bytes_done, bytes_total, tensor)");
    return args;
}

std::string saveDoc(const char* head)
{
    const SaveOptions core;
    return std::string(head)
        + "\n\nWith none of the layout keywords below, every tensor stays where it is, as\n"
          "onnx_ir's ir.save(model, path): inline stays inline, an external tensor stays in\n"
          "the data file of its location (written beside out_path), at its offset where it\n"
          "can; an in-place save of an unchanged model writes nothing (`onnx-repack repack\n"
          "--keep`); compact names data files (one, or a list) whose own tensors are laid out\n"
          "again back to back, closing the orphaned ranges tensors moved out of them left\n"
          "(`--keep --compact FILE`). Any layout keyword lays the model out anew:\n"
          "\nLayout (every other default is the core's, as for `onnx-repack repack`):\n"
          "  external_data         data file name, relative to OUT's folder (default OUT's\n"
          "                        name + .data; + .safetensors with format='safetensors')\n"
          "  size_threshold_bytes  tensors of at least SIZE go external (default "
        + sizeText(kOnnxIrThreshold) + " with external_data, as onnx_ir's ir.save; else "
        + sizeText(core.threshold)
        + ")\n"
          "  align                 offset alignment of large tensors: 0 (dense) or a power of\n"
          "                        two up to "
        + sizeText(kMaxAlignment) + " (default " + sizeText(core.alignment)
        + ")\n"
          "  align_threshold       tensors of at least SIZE are aligned (default "
        + sizeText(core.alignThreshold)
        + ")\n"
          "  order                 'declaration' or 'size' (default declaration)\n"
          "  attributes            False keeps attribute tensors inline (default True)\n"
          "  inline                bring every tensor inline (excludes external_data,\n"
          "                        size_threshold_bytes, shard_size, target, format)\n"
          "  shard_size            maximum bytes per data file, 0 = one file (default "
        + sizeText(core.shardSize)
        + ")\n"
          "  target                'ort', 'optimum', 'web' or 'hub': a reader's naming,\n"
          "                        alignment and limits; the options above override it\n"
          "  format                'onnx' (raw data files) or 'safetensors' (each data file is\n"
          "                        also a .safetensors file: dense, no align or dedupe)\n"
          "  dedupe                store tensors with identical dtype, shape and bytes once\n"
          "  plan                  a plan file (path) or document (dict, from plan()): places\n"
          "                        the tensors it names; the others follow the threshold\n"
          "  allow_corrupt         carry forward bytes that fail validation as they are\n"
          "\nSafety:\n"
          "  checksum              write a SHA-1 checksum per external tensor\n"
          "  force                 replace files other models in the folder use, or that no\n"
          "                        model uses (else ConsentRequired, naming them)\n"
          "  remove_unused         after an in-place save, remove data files the model no\n"
          "                        longer uses (never one another model references)\n"
          "  rewrite               write even when an in-place save would change nothing\n"
          "  wait                  seconds to wait for another save of the same folder\n"
          "                        (default "
        + std::to_string(core.lockWaitMs / 1000)
        + "; 0 = fail at once with Busy; float('inf') = as long\n"
          "                        as it takes)\n"
          "  progress              callable(bytes_done, bytes_total, tensor), called a few\n"
          "                        times a second from the thread that saves; an exception\n"
          "                        in it cancels the save\n"
          "  cancel                an onnx_repack.CancelToken or threading.Event\n"
          "\nSizes are ints (bytes) or text: '4096', '64KiB', '1MiB', '2GiB'. The GIL is released\n"
          "while the core works; Ctrl+C cancels the save (KeyboardInterrupt; also while a\n"
          "server sends nothing), leaving the originals byte-identical. Returns a SaveReport;\n"
          "'saved with a warning' is\n"
          "SaveReport.warnings. Raises UsageError (options), ConsentRequired, Busy, Cancelled,\n"
          "or Error with the core's message; nothing is written then.";
}

// onnx_repack.save_folder: the graphs of `dir` into `outDir` with one shared data file, as
// `onnx-repack repack DIR -o OUT --shared-data NAME` (read again when a graph changed meanwhile).
py::dict saveFolderPy(py::object dir, py::object outDir, py::object sharedData, py::object models,
    py::object threshold, py::object align, py::object alignThreshold, py::object order,
    bool checksum, bool force, bool attributes, bool allowCorrupt, bool rewrite, py::object wait,
    py::object progress, py::object cancel)
{
    SaveArgs args;
    const py::object none = py::none(); // the layout keywords a folder save does not take
    args.layout = {none, threshold, align, alignThreshold, order, none, none, none, none, false,
        false, attributes, allowCorrupt};
    args.checksum = checksum;
    args.force = force;
    args.rewrite = rewrite;
    args.wait = wait;
    // A path, or (a str) a folder of a Hub repository, saved into the local out_dir.
    const ModelArgument source = modelArgument(dir);
    const fs::path out = toPath(outDir);
    SaveRequest request = saveRequest(args);
    // save() without layout keywords keeps every tensor where it is (the seed's meaning); a
    // shared data file lays every weight out anew, with the defaults or the keywords given.
    if (!sharedData.is_none())
        request.keep = false;
    const SaveOptions requested = requestedOptions(request, out / "model.onnx");
    FolderSaveOptions options{requested.layout(), requested.controls(),
        sharedData.is_none() ? std::string() : py::str(sharedData).cast<std::string>(), {}};
    if (sharedData.is_none())
        options.perGraphRequest = request; // each graph with its own data file
    if (!models.is_none())
        for (py::handle name : models)
            options.models.push_back(py::str(name).cast<std::string>());
    SaveWatch watch(progress, cancel);
    options.controls.progress = watch.callback();
    options.controls.cancel = watch.token();
    // Each attempt reads the folder anew; a remote one that changed is not tried again.
    const auto attempt = [&](bool) -> Result<FolderSaveReport> {
        auto folder = source.pathOnly
            ? Result<std::unique_ptr<FolderAccess>>(localFolder(source.text))
            : openFolderArgument(source.text, options.controls.cancel);
        if (!folder)
            return folder.error();
        return saveFolder(**folder, out, options);
    };
    Result<FolderSaveReport> report
        = watch.run([&] { return retryWhileChanged(attempt, !source.isRemote()); });
    watch.raisePending();
    const FolderSaveReport& r = take(std::move(report));
    py::dict d;
    d["folder"] = r.folder.string();
    d["models"] = r.models;
    d["shared_data"] = r.sharedData.string();
    d["shared_bytes"] = r.sharedBytes;
    d["shared_ranges"] = r.sharedRanges;
    d["external_tensors"] = r.externalTensors;
    d["external_bytes"] = r.externalBytes;
    d["bytes_before"] = r.bytesBefore;
    d["bytes_after"] = r.bytesAfter;
    d["unchanged"] = r.unchanged;
    std::vector<std::string> removed;
    for (const auto& p : r.removed)
        removed.push_back(p.string());
    d["removed"] = removed;
    std::vector<std::string> warnings;
    for (const auto& w : r.warnings)
        warnings.push_back(inPythonTerms(w));
    d["warnings"] = warnings;
    return d;
}

// onnx_repack.save_folder, with the signature pybind11 generates.
void registerSaveFolder(py::module_& m)
{
    m.def("save_folder", &saveFolderPy, py::arg("dir"), py::arg("out_dir"), py::kw_only(),
        py::arg("shared_data") = py::none(), py::arg("models") = py::none(),
        py::arg("size_threshold_bytes") = py::none(), py::arg("align") = py::none(),
        py::arg("align_threshold") = py::none(), py::arg("order") = py::none(),
        py::arg("checksum") = false, py::arg("force") = false, py::arg("attributes") = true,
        py::arg("allow_corrupt") = false, py::arg("rewrite") = false, py::arg("wait") = py::none(),
        py::arg("progress") = py::none(), py::arg("cancel") = py::none(),
        "save_folder(dir, out_dir, *, shared_data=None, models=None, size_threshold_bytes=None, "
        "align=None, align_threshold=None, order=None, checksum=False, force=False, "
        "attributes=True, allow_corrupt=False, rewrite=False, wait=None, progress=None, "
        "cancel=None) -> dict\n\n"
        "Saves the graphs of a folder (every .onnx in dir, or `models`) into out_dir (dir itself\n"
        "for in place; dir may be a Hub folder, \"hf://ORG/REPO[@REV]/DIR\", read at one commit\n"
        "and saved into a local out_dir) as one unit: one data file `shared_data` that every graph "
        "reads, each\n"
        "distinct weight stored once; in place, the data files no model reads any more are\n"
        "removed. `onnx-repack repack DIR -o OUT --shared-data NAME`, crash-safe for every graph.\n"
        "Without shared_data, each graph is saved with its own data file, as save() would.\n"
        "Returns what it wrote: shared_bytes, bytes_before, bytes_after, removed, unchanged, ...\n"
        "Raises ConsentRequired naming a model outside the set that reads a file it replaces.");
}

void registerCancelToken(py::module_& m)
{
    py::class_<PyCancelToken, std::shared_ptr<PyCancelToken>>(m, "CancelToken",
        "Stops a save from another thread: pass it as cancel=, call cancel(); the save raises\n"
        "Cancelled and leaves the originals untouched.")
        .def(py::init<>())
        .def("cancel", [](PyCancelToken& t) { t.token.cancel(); })
        .def_property_readonly(
            "cancelled", [](const PyCancelToken& t) { return t.token.isCancelled(); });
}

void registerSaveReport(py::module_& m)
{
    py::class_<SaveReportPy>(m, "SaveReport", "What a save wrote.")
        .def_property_readonly(
            "model_path", [](const SaveReportPy& r) { return r.report.modelPath.string(); })
        .def_property_readonly(
            "data_files",
            [](const SaveReportPy& r) {
                std::vector<std::string> files;
                for (const auto& f : r.report.dataFiles)
                    files.push_back(f.string());
                return files;
            },
            "the data files, as the saved model names them, in shard order")
        .def_property_readonly(
            "bytes_written", [](const SaveReportPy& r) { return r.report.bytesWritten; },
            "the model file plus the data files (0 when unchanged)")
        .def_property_readonly(
            "data_bytes", [](const SaveReportPy& r) { return r.report.dataBytes; })
        .def_property_readonly(
            "padding_bytes", [](const SaveReportPy& r) { return r.report.paddingBytes; })
        .def_property_readonly(
            "external_tensors", [](const SaveReportPy& r) { return r.report.externalTensors; })
        .def_property_readonly(
            "inline_tensors", [](const SaveReportPy& r) { return r.report.inlineTensors; })
        .def_property_readonly("seconds", [](const SaveReportPy& r) { return r.report.seconds; })
        .def_property_readonly(
            "unchanged", [](const SaveReportPy& r) { return r.report.unchanged; },
            "an in-place save whose files already were what it would write: nothing written")
        .def_property_readonly(
            "warnings", [](const SaveReportPy& r) { return r.report.warnings; },
            "non-empty: saved with a warning (the new model is on disk; each says what to do)")
        .def_property_readonly("no_longer_used",
            [](const SaveReportPy& r) {
                std::vector<std::string> files;
                for (const auto& f : r.report.noLongerUsed)
                    files.push_back(f.string());
                return files;
            })
        .def_property_readonly("removed",
            [](const SaveReportPy& r) {
                std::vector<std::string> files;
                for (const auto& f : r.report.removed)
                    files.push_back(f.string());
                return files;
            })
        .def("__repr__", [](const SaveReportPy& r) {
            return "<onnx_repack.SaveReport " + r.report.modelPath.string() + ": "
                + std::to_string(r.report.externalTensors) + " external, "
                + std::to_string(r.report.inlineTensors) + " inline, "
                + std::to_string(r.report.bytesWritten) + " bytes written"
                + (r.report.unchanged ? ", unchanged" : "")
                + (r.report.warnings.empty() ? "" : ", with warnings") + ">";
        });
}

// onnx_repack.save, with the signature its docstring writes (registerSave turns pybind11's off).
void registerSaveFunction(py::module_& m)
{
    m.def(
        "save",
        [](py::handle modelOrPath, py::handle outPath, py::object externalData,
            py::object threshold, py::object align, py::object alignThreshold, py::object order,
            py::object shardSize, bool checksum, bool allInline, py::object target,
            py::object format, bool dedupe, py::object plan, bool force, py::object progress,
            py::object cancel, bool attributes, bool allowCorrupt, bool removeUnused, bool rewrite,
            py::object wait, py::object baseDir, py::object compact) {
            SaveArgs args = saveArgs(externalData, threshold, align, alignThreshold, order,
                shardSize, checksum, allInline, target, format, dedupe, plan, force, progress,
                cancel, attributes, allowCorrupt, removeUnused, rewrite, wait, compact);
            const fs::path out = toPath(outPath);
            const bool proto = isModelProto(modelOrPath);
            if (!baseDir.is_none() && !proto)
                raiseUsage("base_dir: only for an onnx.ModelProto (a Model or a path has its "
                           "own folder; see Model.set_base_dir)");
            // Options are checked before the model is read, as the CLI does.
            SaveOptions options = saveOptions(args, out);
            if (proto)
                return saveProto(modelOrPath, out, baseDir, args, std::move(options));
            if (py::isinstance<PyModel>(modelOrPath))
                return saveModel(modelOrPath.cast<std::shared_ptr<PyModel>>(), std::nullopt, out,
                    args, std::move(options));
            // A path, or a URL as load() takes it (the core says whether it saves that).
            const ModelArgument input = modelArgument(modelOrPath);
            return saveModel(loadModel(input), input, out, args, std::move(options));
        },
        py::arg("model_or_path"), py::arg("out_path"), py::kw_only(),
        py::arg("external_data") = py::none(), py::arg("size_threshold_bytes") = py::none(),
        py::arg("align") = py::none(), py::arg("align_threshold") = py::none(),
        py::arg("order") = py::none(), py::arg("shard_size") = py::none(),
        py::arg("checksum") = false, py::arg("inline") = false, py::arg("target") = py::none(),
        py::arg("format") = py::none(), py::arg("dedupe") = false, py::arg("plan") = py::none(),
        py::arg("force") = false, py::arg("progress") = py::none(), py::arg("cancel") = py::none(),
        py::arg("attributes") = true, py::arg("allow_corrupt") = false,
        py::arg("remove_unused") = false, py::arg("rewrite") = false, py::arg("wait") = py::none(),
        py::arg("base_dir") = py::none(), py::arg("compact") = py::none(),
        saveDoc("save(model_or_path, out_path, *, external_data=None, size_threshold_bytes=None,\n"
                "     align=None, align_threshold=None, order=None, shard_size=None,\n"
                "     checksum=False, inline=False, target=None, format=None, dedupe=False,\n"
                "     plan=None, force=False, progress=None, cancel=None, attributes=True,\n"
                "     allow_corrupt=False, remove_unused=False, rewrite=False, wait=None,\n"
                "     base_dir=None, compact=None) -> SaveReport\n\n"
                "Rewrites where tensors live, safely.\n\n"
                "model_or_path is a Model (updated to the saved layout; its older Tensor\n"
                "handles refuse to read), a path or a URL (as load() takes it), or an\n"
                "onnx.ModelProto whose external tensors resolve against base_dir (default:\n"
                "out_path's folder). out_path may be the\n"
                "model's own path (in place); a missing folder is created. Crash-safe: at every\n"
                "instant out_path opens as the complete old or the complete new model.")
            .c_str());
}

// onnx_repack.save_proto, with the signature its docstring writes, as save's.
void registerSaveProto(py::module_& m)
{
    m.def(
        "save_proto",
        [](py::handle proto, py::handle outPath, py::object baseDir, py::kwargs kwargs) {
            if (!isModelProto(proto))
                raiseUsage("proto: expected an onnx.ModelProto");
            py::object save = py::module_::import("onnx_repack").attr("save");
            kwargs["base_dir"] = baseDir;
            return save(proto, outPath, **kwargs);
        },
        py::arg("proto"), py::arg("out_path"), py::arg("base_dir") = py::none(),
        "save_proto(proto, out_path, base_dir=None, **options) -> SaveReport\n\n"
        "save(proto, out_path, base_dir=base_dir, **options): writes an onnx.ModelProto, its\n"
        "tensors in memory or external, relative to base_dir (default: out_path's folder).\n"
        "Streamed: each raw_data payload of 1 KiB and more is written from the proto into its\n"
        "file (never a second copy of the model in memory). The proto is only read, with the\n"
        "GIL held, and never changed: the progress callback and other threads see it whole.");
}

} // namespace

void registerSave(py::module_& m)
{
    registerSaveFolder(m);
    registerCancelToken(m);
    registerSaveReport(m);
    // The generated signature would say "handle" and "object": the docstrings write their own.
    py::options options;
    options.disable_function_signatures();
    registerSaveFunction(m);
    registerSaveProto(m);
}

} // namespace repack::python
