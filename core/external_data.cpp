#include "external_data.h"

#include "data_writer.h"
#include "model.h"
#include "save_plan.h"
#include "save_steps.h"
#include "tensor_rewrite.h"

#include <onnx/onnx_pb.h>

namespace fs = std::filesystem;

namespace repack {
namespace {

// Writes the plan's data files under `baseDir`, points the model at them and swaps them in.
Status rewriteData(
    Model& model, const SavePlan& plan, const fs::path& baseDir, const SaveOptions& options)
{
    TempCleanup cleanup;
    DataWriter writer(model, plan, options);
    auto targets = writeDataTemps(plan, baseDir, writer, cleanup);
    if (!targets)
        return targets.error();
    TensorRewrite rewrite(model);
    if (Status s = rewrite.apply(plan, plan.files, writer, writer.checksums()); !s)
        return s;
    const auto stale = readsReplacedBy(model, *targets);
    for (const auto& target : *targets)
        if (Status s = swapIn(target, false); !s)
            return s; // earlier files of a sharded plan stay replaced; the model is rolled back
    cleanup.release();
    rewrite.commit();
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
            return Error{p.message};
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
    inlineAll.plan.clear();
    auto plan = planSave(model, model.path().empty() ? "model.onnx" : model.path(), inlineAll);
    if (!plan)
        return plan.error();
    DataWriter writer(model, *plan, inlineAll);
    TensorRewrite rewrite(model);
    if (Status s = rewrite.apply(*plan, {}, writer, {}); !s)
        return s;
    rewrite.commit();
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
    const std::string& relativePath)
{
    auto model = modelOf(tensors, baseDir);
    if (Status s = firstError(*model); !s)
        return s.error();
    SaveOptions options;
    options.dataFile = relativePath;
    options.plan.assign(model->tensors().size(), Placement::External);
    auto plan = planSave(*model, baseDir / "model.onnx", options);
    if (!plan)
        return plan.error();
    if (Status s = rewriteData(*model, *plan, fs::absolute(baseDir).lexically_normal(), options);
        !s)
        return s.error();
    return tensorsOf(*model);
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
