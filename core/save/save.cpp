// The save protocol of docs/save-protocol.md. In short, with M the model path, D a data file
// and T its temporary, all under an exclusive lock of the folders written into:
//   1. write T (new data) and sync;   2. write two model temporaries, one naming T, one naming D;
//   3. rename the first over M        (M -> T: the complete new model; the commit point);
//   4. link T to a temporary name and rename that over D (D is now the new data);
//   5. rename the second over M       (M -> D);   6. unlink T.
// Every state on disk is a complete model for every reader: the old one before 3, the new one
// from 3 on. Failures before 3 change nothing; from 3 on they are warnings, never data loss.
#include "save.h"

#include "clean.h"
#include "core/inspect/readers.h"
#include "core/inspect/verify.h"
#include "core/io/environment.h"
#include "core/io/hub_cache.h"
#include "core/model/model.h"
#include "core/plan/file_layout.h"
#include "core/save_lock.h"
#include "crash_point.h"
#include "data_writer.h"
#include "model_writer.h"
#include "output_folder.h"
#include "save_conflicts.h"
#include "save_steps.h"
#include "source_watch.h"
#include "temp_file.h"
#include "tensor_rewrite.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <set>
#include <unistd.h>

namespace fs = std::filesystem;

namespace repack {
namespace {

std::string joinMessages(const std::vector<SaveConflict>& conflicts)
{
    std::string out;
    for (const auto& c : conflicts)
        out += (out.empty() ? "" : "; ") + c.message;
    return out;
}

// Everything after the commit point: each step may fail only with a warning.
class Finisher {
public:
    explicit Finisher(std::vector<std::string>& warnings)
        : m_warnings(warnings)
    {
    }
    bool check(Status status, const std::string& consequence)
    {
        if (!status)
            add(status.error().message + "; " + consequence);
        return status.ok();
    }
    void unlinkFile(const fs::path& path, const char* fault, const std::string& consequence)
    {
        if (failPoint(fault) || ::unlink(path.c_str()) != 0)
            add(systemMessage("cannot remove", path, failPoint(fault) ? EIO : -1) + "; "
                + consequence);
    }

private:
    void add(std::string warning) // once: the same folder may fail to sync at every step
    {
        if (std::find(m_warnings.begin(), m_warnings.end(), warning) == m_warnings.end())
            m_warnings.push_back(std::move(warning));
    }

    std::vector<std::string>& m_warnings;
};

// A save that writes nothing still refuses what a rewrite would refuse: bytes that fail their
// checksum (unless options.allowCorrupt). Only models with checksum keys are read.
Status checkChecksums(const Model& model, const SaveOptions& options)
{
    if (options.allowCorrupt
        || std::none_of(model.tensors().begin(), model.tensors().end(),
            [](const TensorInfo& t) { return t.isExternal() && !t.external->checksum->empty(); }))
        return {};
    VerifyOptions verifying;
    verifying.progress = options.progress;
    verifying.cancel = options.cancel;
    for (const Problem& p : verify(model, verifying))
        if (p.code == code::ChecksumMismatch || p.code == code::ReadFailed)
            return Error::corrupt(p.message
                + "; refusing to carry corrupt bytes forward (--allow-corrupt keeps them and "
                  "their old checksum)");
    if (options.cancel && options.cancel->isCancelled())
        return cancelled("save");
    return {};
}

// The data files an in-place save stopped using, and (options.removeUnused) removes those no
// other model in the folder references.
void dropUnused(const std::vector<fs::path>& readBefore, const std::vector<fs::path>& finals,
    const fs::path& modelPath, bool remove, Finisher& finish, SaveReport& report)
{
    std::set<FileId> kept;
    std::vector<fs::path> unidentified; // finals stat() cannot see: any file could be one
    for (const auto& f : finals) {
        if (auto id = fileIdOf(f))
            kept.insert(*id);
        else
            unidentified.push_back(f);
    }
    for (const auto& path : readBefore) {
        if (isTempName(path.filename().string()))
            continue; // an interrupted save's temporary: removed as a leftover
        const auto id = fileIdOf(path);
        if (!id || kept.count(*id))
            continue;
        report.noLongerUsed.push_back(path);
        if (!remove)
            continue;
        if (!unidentified.empty()) {
            report.warnings.push_back(path.string() + " is kept: " + unidentified.front().string()
                + " could not be examined to tell whether it is the same file");
            continue;
        }
        // Could not tell means keep, and say which model could not be read.
        const Readers readers = readersOf(path, {{modelPath.parent_path()}, {modelPath}});
        for (const auto& unknown : readers.unknown)
            report.warnings.push_back(path.string() + " is kept: " + unknown.string()
                + " could not be read to tell whether it uses it");
        if (!readers.none())
            continue;
        const size_t before = report.warnings.size();
        finish.unlinkFile(path, "unlink-unused", "the model no longer uses it; remove it by hand");
        if (report.warnings.size() == before)
            report.removed.push_back(path);
    }
}

// Folders made for data files; those still empty when the save ends (it failed) are removed.
class DataFolders {
public:
    DataFolders() = default;
    DataFolders(const DataFolders&) = delete;
    DataFolders& operator=(const DataFolders&) = delete;
    ~DataFolders()
    {
        for (auto it = m_created.rbegin(); it != m_created.rend(); ++it)
            removeCreatedFolders(*it);
    }
    Status create(const fs::path& file)
    {
        auto created = createOutputFolders(file);
        if (!created)
            return created.error();
        m_created.push_back(std::move(*created));
        return {};
    }

private:
    std::vector<std::vector<fs::path>> m_created;
};

Result<SaveReport> saveUnguarded(Model& model, const fs::path& pathIn, const SaveOptions& options)
{
    const auto started = std::chrono::steady_clock::now();
    const fs::path path = fs::absolute(pathIn).lexically_normal();
    const fs::path dir = path.parent_path();
    const std::string cannot = "cannot save " + path.string() + ": ";
    // A remote model (issue 38) is saved to a local path, its bytes read from the server
    // through its sources as the data files are written; it has no path, so never in place.
    if (model.isRemote())
        if (Status s = outsideHubCache(dir); !s)
            return s.error().prefixed(cannot);
    auto plan = planSave(model, path, options);
    if (!plan)
        return plan.error().prefixed(cannot);
    if (Status s = checkAliases(model, path, *plan); !s)
        return s.error().prefixed(cannot);
    // Keeping placement, a data file in a subfolder of the model's folder ("weights/w.bin")
    // comes along to another folder, its subfolder made now. Otherwise, as python-onnx, a data
    // file's folder must exist.
    DataFolders folders;
    if (options.keepPlacement)
        for (const auto& name : plan->files)
            if (Status s = folders.create(dir / name); !s)
                return s.error().prefixed(cannot);

    // One save at a time in every folder this one writes into (SPEC 5a).
    auto lock = FolderLock::acquire(saveFolders(path, *plan), options.lockWaitMs, options.cancel);
    if (!lock)
        return lock.error().prefixed(cannot);
    crashPoint("locked");
    // Another save may have replaced the model while this one waited for the lock: its bytes
    // and references are not what this model describes any more.
    if (!model.path().empty() && !namesFile(model.path(), model.fileIdentity()))
        return Error{cannot + model.path().string()
                + " changed since the model was opened (another save?); open it again",
            ErrorKind::Changed};
    if (!options.rewrite && planKeepsLayout(model, path, *plan, options)) {
        if (Status s = checkChecksums(model, options); !s)
            return s.error().prefixed(cannot);
        SaveReport report;
        report.modelPath = path;
        report.unchanged = true;
        report.warnings = plan->notes;
        std::set<std::string> finals{path.filename().string()};
        for (const auto& name : plan->files)
            finals.insert(
                report.dataFiles.emplace_back((dir / name).lexically_normal()).filename().string());
        report.keptFiles = report.dataFiles;
        removeOwnLeftovers(model, finals); // as the rewrite would
        for (const auto& p : plan->tensors)
            (p.external ? report.externalTensors : report.inlineTensors)++;
        report.seconds
            = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return report;
    }
    // Data files whose bytes would not change are not written again: they keep their inode,
    // their time and every reader (only the model names them anew). --rewrite writes them all.
    const std::vector<bool> kept = options.rewrite ? std::vector<bool>(plan->files.size(), false)
                                                   : keptDataFiles(model, path, *plan, options);
    if (!options.force)
        if (auto conflicts = conflictsOf(model, path, *plan, kept); !conflicts.empty())
            return Error{joinMessages(conflicts), ErrorKind::ConsentNeeded};
    // The bytes of a kept file are not copied, so not checked while copying: checked here, as
    // a save that writes nothing checks them, never carried forward unread.
    if (std::find(kept.begin(), kept.end(), true) != kept.end())
        if (Status s = checkChecksums(model, options); !s)
            return s.error().prefixed(cannot);
    // Every file the save reads holds still until its bytes are copied, or the save fails.
    auto sources = SourceWatch::start(model, options.cancel);
    if (!sources)
        return sources.error().prefixed(cannot);
    // Writing needs the model's protos (an unchanged save above does not), but not those of
    // the inline tensors that stay inline: they are written back from their bytes.
    if (Status s = model.loadProtosLeavingOut([&](size_t i) {
            return !plan->tensors[i].external && !model.tensors()[i].isExternal();
        });
        !s)
        return s.error().prefixed(cannot);
    const bool inPlace = !model.path().empty() && samePathOrFile(path, model.path());
    const std::vector<fs::path> readBefore = inPlace ? filesReadBy(model) : std::vector<fs::path>{};

    // 1. New data into temporaries beside the final files.
    TempCleanup cleanup;
    DataWriter writer(model, *plan, options);
    auto written = writeDataTemps(*plan, dir, writer, cleanup, kept);
    if (!written)
        return written.error().prefixed(cannot);
    const std::vector<DataTarget>& targets = *written;
    crashPoint("data-written");

    // 2. The model, once naming the temporaries and once naming the final files (a kept file
    // by its final name in both).
    std::vector<std::string> finalNames, tempNames;
    for (const auto& name : plan->files)
        finalNames.push_back(fs::path(name).lexically_normal().generic_string());
    tempNames = finalNames;
    for (const auto& t : targets)
        tempNames[t.file] = t.temp.path.lexically_relative(dir).generic_string();
    // A tensor of a kept file keeps its checksum key (its bytes are not read again).
    std::map<size_t, std::string> checksums = writer.checksums();
    for (size_t i = 0; i < plan->tensors.size(); ++i)
        if (const PlannedTensor& p = plan->tensors[i]; p.external && kept[p.file])
            if (const TensorInfo& t = model.tensors()[i]; !t.external->checksum->empty())
                checksums.emplace(i, *t.external->checksum);
    // The model is streamed below: the raw_data of tensors that stay inline (or come back
    // inline) is copied file to file from where it lies, never held in memory; a failure puts
    // the model back as it was.
    const Splices splices = splicesOf(model, *plan, writer);
    TensorRewrite rewrite(model);
    if (Status s
        = rewrite.apply(*plan, tempNames, writer, checksums, TensorRewrite::Inline::Spliced);
        !s)
        return s.error().prefixed(cannot);
    std::optional<ModelTemp> modelViaTemps;
    if (!targets.empty()) {
        auto temp = writeModelTemp(model, path, splices, writer, true, cleanup);
        if (!temp)
            return temp.error().prefixed(cannot);
        modelViaTemps = std::move(*temp);
    }
    rewrite.relocate(finalNames);
    // A remote model's payloads come from the first model file, not from the server again.
    auto modelFinal = writeModelTemp(model, path, splices, writer, !modelViaTemps, cleanup,
        model.isRemote() && modelViaTemps ? &*modelViaTemps : nullptr);
    if (!modelFinal)
        return modelFinal.error().prefixed(cannot);
    crashPoint("models-written");
    const std::vector<fs::path> stale = readsReplacedBy(model, targets);
    // Everything is copied: a source written to meanwhile, or replaced on its server after it
    // was read, would have given a mix of bytes.
    if (Status s = sources->stillUnchanged(options.cancel); !s)
        return s.error().prefixed(cannot);
    sources->release();

    // The last moment a cancel can take effect: after this the new model is on disk.
    if (options.cancel && options.cancel->isCancelled())
        return cancelled("save");

    // 3. Commit: the model now names the complete new data (under its temporary names).
    const fs::path& commitFrom = modelViaTemps ? modelViaTemps->file.path : modelFinal->file.path;
    if (Status s = renameFile(commitFrom, path, "rename-model-temp"); !s)
        return s.error().prefixed(cannot);
    cleanup.release(); // from here on nothing that was committed is deleted
    SaveReport report;
    Finisher finish(report.warnings);
    const std::string mayRevert
        = "after a power loss the previous model may come back; the new one is complete";
    finish.check(syncFolder(dir), mayRevert);
    crashPoint("model-temp-committed");

    bool finalNamesOk = true;
    if (modelViaTemps) {
        // 4. Each data file under its final name, the temporary name kept valid meanwhile.
        for (const auto& t : targets) {
            finalNamesOk = finish.check(swapIn(t),
                path.filename().string() + " keeps naming its data by the temporary name "
                    + t.temp.path.filename().string()
                    + " (complete and valid); saving the model again gives it its final name");
            if (!finalNamesOk)
                break;
            finish.check(syncFolder(t.finalPath.parent_path()), mayRevert);
            crashPoint("data-swapped");
        }
        // 5. The model names the final files.
        if (finalNamesOk) {
            finalNamesOk
                = finish.check(renameFile(modelFinal->file.path, path, "rename-model-final"),
                    path.filename().string()
                        + " keeps naming its data by temporary names (complete and valid); saving "
                          "the model again gives them their final names");
            if (finalNamesOk) {
                finish.check(syncFolder(dir), mayRevert);
                crashPoint("model-final-committed");
            }
        }
        if (!finalNamesOk) {
            finish.unlinkFile(modelFinal->file.path, "unlink-model-temp", // never committed
                "it is a copy of the new model that was never committed; onnx-repack clean "
                "removes it");
        } else {
            // 6. The temporary names go.
            for (const auto& t : targets)
                finish.unlinkFile(t.temp.path, "unlink-temp",
                    "it is a leftover copy of " + t.finalPath.filename().string()
                        + "; onnx-repack clean removes it");
            crashPoint("cleaned");
        }
    }

    // What the report says of the plan, taken before the model is indexed again: the plan's
    // entry per tensor goes first (two indexes and a plan of millions of tensors at once
    // would be the save's peak).
    report.dataBytes = std::accumulate(plan->fileBytes.begin(), plan->fileBytes.end(), uint64_t(0));
    uint64_t dataWritten = 0;
    for (const auto& t : targets)
        dataWritten += plan->fileBytes[t.file];
    report.paddingBytes = paddingBytes(*plan);
    for (const auto& p : plan->tensors)
        (p.external ? report.externalTensors : report.inlineTensors)++;
    std::vector<PlannedTensor>().swap(plan->tensors);

    // The in-memory model now is what is on disk; reads through replaced files fail.
    rewrite.relocate(finalNamesOk ? finalNames : tempNames);
    rewrite.commit();
    const ModelTemp& committed = finalNamesOk ? *modelFinal : *modelViaTemps;
    model.adoptSave({path, committed.identity, committed.written.bytes,
        payloadRanges(splices, committed), stale, "replaced by a save to " + path.string()});

    // Every data file the model reads now, kept or written, in plan order.
    std::vector<fs::path> finals{path};
    for (size_t f = 0; f < finalNames.size(); ++f) {
        finals.push_back((dir / finalNames[f]).lexically_normal());
        report.dataFiles.push_back(
            (dir / (finalNamesOk ? finalNames : tempNames)[f]).lexically_normal());
        if (kept[f])
            report.keptFiles.push_back(report.dataFiles.back());
    }
    if (inPlace)
        dropUnused(readBefore, finals, path, options.removeUnused, finish, report);
    if (finalNamesOk) {
        std::set<std::string> names;
        for (const auto& f : finals)
            names.insert(f.filename().string());
        removeOwnLeftovers(model, names);
    }

    report.modelPath = path;
    report.warnings.insert(report.warnings.begin(), plan->notes.begin(), plan->notes.end());
    report.bytesWritten = committed.written.bytes + dataWritten;
    report.seconds
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

} // namespace

Status outsideHubCache(const fs::path& dir)
{
    const fs::path cache = hubSettings(processEnvironment()).cache;
    std::error_code ec;
    const fs::path root = cache.empty() ? fs::path() : fs::weakly_canonical(cache, ec);
    if (root.empty() || ec)
        return {};
    const fs::path where = fs::weakly_canonical(dir, ec);
    if (ec)
        return {};
    if (std::mismatch(root.begin(), root.end(), where.begin(), where.end()).first != root.end())
        return {};
    return Error::usage(dir.string() + " is inside the Hugging Face cache (" + cache.string()
        + "), which is never written: save the model to another folder");
}

Result<SaveReport> saveRetrying(
    const SaveAttempt& attempt, bool reloadable, const std::function<void()>& onRetry)
{
    return retryWhileChanged(attempt, reloadable, onRetry);
}

Result<SaveReport> save(Model& model, const fs::path& path, const SaveOptions& options)
{
    // Unwinding removes the temporaries and rolls the model back, as any failure before the
    // commit does; after it, only the report is built.
    return guardMemory(
        "cannot save " + path.string(), [&] { return saveUnguarded(model, path, options); });
}

} // namespace repack
