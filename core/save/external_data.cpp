#include "external_data.h"

#include "core/inspect/readers.h"
#include "core/model/model.h"
#include "core/plan/save_plan.h"
#include "core/save_lock.h"
#include "data_writer.h"
#include "save_conflicts.h"
#include "save_steps.h"
#include "source_watch.h"
#include "tensor_rewrite.h"

#include <onnx/onnx_pb.h>

#include <set>

namespace fs = std::filesystem;

namespace repack {
namespace {

// Existing files among the plan's targets that the model does not read itself, or that other
// models read (from `baseDir`, the model's folder, or a folder between them and the file):
// replacing them needs options.force. Every such file is named, with its readers.
Status checkTargets(const Model& model, const SavePlan& plan, const fs::path& baseDir)
{
    std::set<FileId> own;
    for (const auto& path : filesReadBy(model))
        if (auto id = fileIdOf(path))
            own.insert(*id);
    ReaderSearch search{{baseDir}, {}};
    if (!model.path().empty()) {
        search.roots.push_back(model.path().parent_path());
        search.exclude.push_back(model.path());
    }
    std::vector<fs::path> targets;
    for (const auto& name : plan.files)
        targets.push_back((baseDir / name).lexically_normal());
    const std::vector<Readers> readers = readersOf(targets, search);
    std::string conflicts;
    for (size_t i = 0; i < targets.size(); ++i) {
        const auto id = fileIdOf(targets[i]);
        if (!id)
            continue;
        std::string why = readers[i].describe();
        if (!own.count(*id))
            why = "this model does not use it" + (why.empty() ? "" : "; " + why);
        if (why.empty())
            continue;
        conflicts
            += (conflicts.empty() ? "" : "; ") + targets[i].string() + " already exists: " + why;
    }
    if (conflicts.empty())
        return {};
    return Error{
        conflicts + "; replacing it needs explicit consent (force)", ErrorKind::ConsentNeeded};
}

// Writes the plan's data files under `baseDir`, points the model at them and swaps them in.
Status rewriteData(
    Model& model, const SavePlan& plan, const fs::path& baseDir, const SaveOptions& options)
{
    std::vector<fs::path> folders{baseDir}, paths;
    for (const auto& name : plan.files) {
        paths.push_back((baseDir / name).lexically_normal());
        folders.push_back(paths.back().parent_path());
    }
    if (Status s = checkDataAliases(plan.files, paths, {{model.path(), "the model file"}}); !s)
        return s;
    auto lock = FolderLock::acquire(folders, options.lockWaitMs, options.cancel);
    if (!lock)
        return lock.error();
    auto sources = SourceWatch::start(model, options.cancel);
    if (!sources)
        return sources.error();
    if (Status s = model.loadProtos(); !s)
        return s;
    if (!options.force)
        if (Status s = checkTargets(model, plan, baseDir); !s)
            return s;
    TempCleanup cleanup;
    DataWriter writer(model, plan, options);
    auto targets = writeDataTemps(plan, baseDir, writer, cleanup);
    if (!targets)
        return targets.error();
    InlineMaterialization inlined(model);
    if (Status s = inlined.materialize([&](size_t i) { return !plan.tensors[i].external; }); !s)
        return s;
    TensorRewrite rewrite(model);
    if (Status s
        = rewrite.apply(plan, plan.files, writer, writer.checksums(), TensorRewrite::Inline::Read);
        !s)
        return s;
    const auto stale = readsReplacedBy(model, *targets);
    if (Status s = sources->stillUnchanged(options.cancel); !s)
        return s;
    sources->release();
    for (const auto& target : *targets)
        if (Status s = renameFile(target.temp.path, target.finalPath, "rename-data"); !s)
            return s; // earlier files of a sharded plan stay replaced; the model is rolled back
    cleanup.release();
    for (const auto& folder : folders)
        (void)syncFolder(folder);
    rewrite.commit();
    inlined.commit();
    model.invalidateDataFiles(stale, "replaced by rewriting external data in " + baseDir.string());
    model.setBaseDir(baseDir);
    return {};
}

std::unique_ptr<Model> modelOf(std::vector<onnx::TensorProto>& tensors, const fs::path& baseDir)
{
    auto proto = std::make_unique<onnx::ModelProto>();
    auto* graph = proto->mutable_graph();
    for (auto& t : tensors)
        graph->add_initializer()->Swap(&t);
    return Model::fromProto(std::move(proto), baseDir);
}

std::vector<onnx::TensorProto> tensorsOf(Model& model)
{
    auto* initializers = model.mutableProto().mutable_graph()->mutable_initializer();
    std::vector<onnx::TensorProto> out(static_cast<size_t>(initializers->size()));
    for (size_t i = 0; i < out.size(); ++i)
        out[i].Swap(initializers->Mutable(static_cast<int>(i)));
    return out;
}

Status firstError(const Model& model)
{
    for (const auto& p : model.problems())
        if (p.severity == Severity::Error)
            return Error::corrupt(p.message);
    return {};
}

} // namespace

void setBaseDir(Model& model, const fs::path& dir)
{
    model.setBaseDir(dir);
}

Status loadToModel(Model& model, const SaveOptions& options)
{
    SaveOptions inlineAll = options;
    inlineAll.allInline = true;
    inlineAll.placements.clear();
    auto plan = planSave(model, model.path().empty() ? "model.onnx" : model.path(), inlineAll);
    if (!plan)
        return plan.error();
    auto sources = SourceWatch::start(model, options.cancel);
    if (!sources)
        return sources.error();
    if (Status s = model.loadProtos(); !s)
        return s;
    DataWriter writer(model, *plan, inlineAll);
    InlineMaterialization inlined(model);
    if (Status s = inlined.materialize(); !s)
        return s;
    TensorRewrite rewrite(model);
    if (Status s = rewrite.apply(*plan, {}, writer, {}, TensorRewrite::Inline::Read); !s)
        return s;
    if (Status s = sources->stillUnchanged(options.cancel); !s)
        return s; // the rewrite and materialization roll back
    rewrite.commit();
    inlined.commit();
    model.reindex();
    return {};
}

Status unloadFromModel(Model& model, const fs::path& baseDir, const std::string& relativePath,
    uint64_t thresholdBytes, const SaveOptions& options)
{
    SaveOptions unload = options;
    unload.dataFile = relativePath;
    unload.threshold = thresholdBytes;
    unload.allInline = false;
    auto plan = planSave(model, baseDir / "model.onnx", unload);
    if (!plan)
        return plan.error();
    return rewriteData(model, *plan, fs::absolute(baseDir).lexically_normal(), unload);
}

Result<std::vector<onnx::TensorProto>> convertTensorsToExternal(
    std::vector<onnx::TensorProto> tensors, const fs::path& baseDir,
    const std::string& relativePath, const SaveOptions& options)
{
    auto model = modelOf(tensors, baseDir);
    return convertInitializersToExternal(*model, baseDir, relativePath, options);
}

Result<std::vector<onnx::TensorProto>> convertInitializersToExternal(Model& model,
    const fs::path& baseDir, const std::string& relativePath, const SaveOptions& given)
{
    if (Status s = firstError(model); !s)
        return s.error();
    SaveOptions options = given;
    options.dataFile = relativePath;
    options.placements.assign(model.tensors().size(), TensorPlacement(Placement::External));
    auto plan = planSave(model, baseDir / "model.onnx", options);
    if (!plan)
        return plan.error();
    if (Status s = rewriteData(model, *plan, fs::absolute(baseDir).lexically_normal(), options); !s)
        return s.error();
    return tensorsOf(model);
}

Result<std::vector<onnx::TensorProto>> convertTensorsFromExternal(
    std::vector<onnx::TensorProto> tensors, const fs::path& baseDir)
{
    auto model = modelOf(tensors, baseDir);
    if (Status s = firstError(*model); !s)
        return s.error();
    if (Status s = loadToModel(*model); !s)
        return s.error();
    return tensorsOf(*model);
}

} // namespace repack
