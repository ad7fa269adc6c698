// The save protocol of docs/save-protocol.md. In short, with M the model path, D a data file
// and T its temporary:
//   1. write T (new data) and sync;   2. write two model temporaries, one naming T, one naming D;
//   3. rename the first over M        (M -> T: the complete new model; the commit point);
//   4. link T to a temporary name and rename that over D (D is now the new data);
//   5. rename the second over M       (M -> D);   6. unlink T.
// Every rename is atomic and followed by a directory sync, so at every instant M opens as the
// complete old model (before 3) or the complete new one (after), for any reader.
#include "save.h"

#include "crash_point.h"
#include "data_writer.h"
#include "model.h"
#include "model_writer.h"
#include "save_steps.h"
#include "temp_file.h"
#include "tensor_rewrite.h"

#include <onnx/onnx_pb.h>

#include <chrono>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace repack {
namespace {

bool samePath(const fs::path& a, const fs::path& b)
{
    std::error_code ec;
    return a == b || fs::equivalent(a, b, ec);
}

// Writes `proto` to a new temporary for `modelPath`.
Result<TempFile> writeModelTemp(
    const onnx::ModelProto& proto, const fs::path& modelPath, uint64_t& bytes)
{
    auto temp = createTempFor(modelPath);
    if (!temp)
        return temp.error();
    auto written = writeModel(proto, temp->fd.get(), temp->path);
    if (!written) {
        ::unlink(temp->path.c_str());
        return written.error();
    }
    bytes = *written;
    return temp;
}

} // namespace

std::vector<fs::path> unreferencedTargets(
    const Model& model, const fs::path& path, const SaveOptions& options)
{
    const fs::path out = fs::absolute(path).lexically_normal();
    auto plan = planSave(model, out, options);
    if (!plan)
        return {};
    // Files this save may replace: the ones the model uses, when it is saved over itself.
    // Saving elsewhere must leave the source model's files as they are.
    // A model left by an interrupted save names temporaries; the files they stand for are its
    // own too, so saving it again finishes that save instead of asking for consent.
    std::set<FileId> own;
    if (!model.path().empty() && samePath(out, model.path())) {
        std::set<fs::path> referenced; // one stat per data file, not per tensor
        for (const auto& t : model.tensors())
            if (t.isExternal() && !t.external.resolvedPath.empty())
                referenced.insert(t.external.resolvedPath);
        for (const auto& path : referenced) {
            if (auto id = fileId(path))
                own.insert(*id);
            const std::string final = finalNameOfTemp(path.filename().string());
            if (!final.empty())
                if (auto id = fileId(path.parent_path() / final))
                    own.insert(*id);
        }
    }
    std::vector<fs::path> conflicts;
    for (const auto& name : plan->files) {
        const fs::path target = out.parent_path() / name;
        if (auto id = fileId(target); id && !own.count(*id))
            conflicts.push_back(target);
    }
    return conflicts;
}

Result<SaveReport> save(Model& model, const fs::path& pathIn, const SaveOptions& options)
{
    const auto started = std::chrono::steady_clock::now();
    const fs::path path = fs::absolute(pathIn).lexically_normal();
    const fs::path dir = path.parent_path();
    auto plan = planSave(model, path, options);
    if (!plan)
        return Error{path.string() + ": " + plan.error().message};
    if (!options.force) {
        const auto conflicts = unreferencedTargets(model, path, options);
        if (!conflicts.empty())
            return Error{conflicts.front().string()
                + " already exists and is not this model's data file; "
                  "overwriting it needs explicit consent (--force)"};
    }

    // 1. New data into temporaries beside the final files.
    TempCleanup cleanup;
    DataWriter writer(model, *plan, options);
    auto written = writeDataTemps(*plan, dir, writer, cleanup);
    if (!written)
        return Error{"cannot save " + path.string() + ": " + written.error().message};
    const std::vector<DataTarget>& targets = *written;
    crashPoint("data-written");

    // 2. The model, once naming the temporaries and once naming the final files.
    std::vector<std::string> tempNames, finalNames;
    for (const auto& t : targets) {
        tempNames.push_back(t.temp.path.lexically_relative(fs::canonical(dir)).generic_string());
        finalNames.push_back(t.finalPath.lexically_relative(dir).generic_string());
    }
    TensorRewrite rewrite(model);
    if (Status s = rewrite.apply(*plan, tempNames, writer, writer.checksums()); !s)
        return s.error();
    uint64_t modelBytes = 0;
    std::optional<TempFile> modelViaTemps;
    if (!targets.empty()) {
        auto temp = writeModelTemp(model.proto(), path, modelBytes);
        if (!temp)
            return temp.error();
        cleanup.add(temp->path);
        modelViaTemps = std::move(*temp);
    }
    rewrite.relocate(finalNames);
    auto modelFinal = writeModelTemp(model.proto(), path, modelBytes);
    if (!modelFinal)
        return modelFinal.error();
    cleanup.add(modelFinal->path);
    crashPoint("models-written");
    const std::vector<fs::path> stale = readsReplacedBy(model, targets);
    const std::string reason = "replaced by a save to " + path.string();

    // The last moment a cancel can take effect: after this the new model is on disk.
    if (options.cancel && options.cancel->isCancelled())
        return Error{"save cancelled"};

    // 3. Commit: the model now names the complete new data under its temporary names.
    if (modelViaTemps) {
        if (Status s = renameSynced(modelViaTemps->path, path); !s)
            return s.error();
        crashPoint("model-temp-committed");
    }
    // From here the new model is on disk: failures roll forward, never back.
    cleanup.release();
    std::vector<fs::path> finals{path};
    for (const auto& t : targets) {
        if (Status s = swapIn(t, true); !s) {
            ::unlink(modelFinal->path.c_str());
            rewrite.relocate(tempNames);
            rewrite.commit();
            model.invalidateDataFiles(stale, reason);
            model.setLocation(path, modelBytes);
            return Error{path.string() + " was saved, but its data keeps the temporary name "
                + t.temp.path.filename().string() + ": " + s.error().message};
        }
        finals.push_back(t.finalPath);
        crashPoint("data-swapped");
    }
    if (Status s = renameSynced(modelFinal->path, path); !s)
        return Error{path.string() + ": " + s.error().message};
    crashPoint("model-final-committed");
    for (const auto& t : targets)
        ::unlink(t.temp.path.c_str());
    for (const auto& t : targets)
        (void)fsyncDirectory(t.temp.path.parent_path());
    crashPoint("cleaned");

    // The in-memory model now is what is on disk; reads through replaced files fail.
    rewrite.commit();
    model.invalidateDataFiles(stale, reason);
    model.setLocation(path, modelBytes);
    // leftovers: see folder_scan (removeLeftovers)

    SaveReport report;
    report.modelPath = path;
    for (const auto& t : targets)
        report.dataFiles.push_back(t.finalPath);
    report.bytesWritten = modelBytes;
    for (auto bytes : plan->fileBytes)
        report.bytesWritten += bytes;
    for (const auto& p : plan->tensors)
        (p.external ? report.externalTensors : report.inlineTensors)++;
    report.seconds
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

} // namespace repack
