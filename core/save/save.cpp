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
#include "core/paths.h"
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

// The save's steps, in the order of the protocol above, and what they share. The members are
// in the order the steps make them, so a failure unwinds in reverse: the rewrite rolled back,
// the temporaries removed, the sources and the lock released, then the folders made for data
// files removed.
class ModelSave {
public:
    ModelSave(Model& model, const fs::path& pathIn, const SaveOptions& options)
        : m_model(model)
        , m_options(options)
        , m_started(std::chrono::steady_clock::now())
        , m_path(fs::absolute(pathIn).lexically_normal())
        , m_dir(m_path.parent_path())
        , m_cannot("cannot save " + m_path.string() + ": ")
    {
    }
    ModelSave(const ModelSave&) = delete;
    ModelSave& operator=(const ModelSave&) = delete;

    Result<SaveReport> run()
    {
        if (Status s = plan(); !s)
            return s.error();
        if (Status s = lock(); !s)
            return s.error();
        if (!m_options.rewrite && planKeepsLayout(m_model, m_path, m_plan, m_options))
            return unchanged();
        if (Status s = checkConsent(); !s)
            return s.error();
        if (Status s = prepareToWrite(); !s)
            return s.error();
        if (Status s = writeData(); !s)
            return s.error();
        if (Status s = writeModels(); !s)
            return s.error();
        if (Status s = verifySources(); !s)
            return s.error();
        // The last moment a cancel can take effect: after this the new model is on disk.
        if (m_options.cancel && m_options.cancel->isCancelled())
            return cancelled("save");
        if (Status s = commit(); !s)
            return s.error();
        giveFinalNames();
        return finishReport();
    }

private:
    // The layout to write, refused where it would write into the Hugging Face cache or over a
    // file the model reads through another name.
    Status plan()
    {
        // A remote model is saved to a local path, its bytes read from the server through its
        // sources as the data files are written; it has no path, so never in place.
        if (m_model.isRemote())
            if (Status s = outsideHubCache(m_dir); !s)
                return s.error().prefixed(m_cannot);
        auto planned = planSave(m_model, m_path, m_options);
        if (!planned)
            return planned.error().prefixed(m_cannot);
        m_plan = std::move(*planned);
        if (Status s = checkAliases(m_model, m_path, m_plan); !s)
            return s.error().prefixed(m_cannot);
        // Keeping placement, a data file in a subfolder of the model's folder ("weights/w.bin")
        // comes along to another folder, its subfolder made now. Otherwise, as python-onnx, a
        // data file's folder must exist.
        if (m_options.keepPlacement)
            for (const auto& name : m_plan.files)
                if (Status s = m_folders.create(m_dir / name); !s)
                    return s.error().prefixed(m_cannot);
        return {};
    }

    // One save at a time in every folder this one writes into (SPEC 5a).
    Status lock()
    {
        auto acquired = FolderLock::acquire(
            saveFolders(m_path, m_plan), m_options.lockWaitMs, m_options.cancel);
        if (!acquired)
            return acquired.error().prefixed(m_cannot);
        m_lock = std::move(*acquired);
        crashPoint("locked");
        // Another save may have replaced the model while this one waited for the lock: its bytes
        // and references are not what this model describes any more.
        if (!m_model.path().empty() && !namesFile(m_model.path(), m_model.fileIdentity()))
            return Error{m_cannot + m_model.path().string()
                    + " changed since the model was opened (another save?); open it again",
                ErrorKind::Changed};
        return {};
    }

    // The plan keeps the layout the model has: nothing is written, but what a rewrite would
    // check is checked and its leftovers removed.
    Result<SaveReport> unchanged()
    {
        if (Status s = checkChecksums(m_model, m_options); !s)
            return s.error().prefixed(m_cannot);
        SaveReport report;
        report.modelPath = m_path;
        report.unchanged = true;
        report.warnings = m_plan.notes;
        std::set<std::string> finals{m_path.filename().string()};
        for (const auto& name : m_plan.files)
            finals.insert(report.dataFiles.emplace_back((m_dir / name).lexically_normal())
                              .filename()
                              .string());
        report.keptFiles = report.dataFiles;
        removeOwnLeftovers(m_model, finals); // as the rewrite would
        for (const auto& p : m_plan.tensors)
            (p.external ? report.externalTensors : report.inlineTensors)++;
        report.seconds = secondsSinceStart();
        return report;
    }

    // Which data files are kept as they are, whether replacing the others needs the user's
    // consent, and whether the kept ones hold the bytes their checksums say.
    Status checkConsent()
    {
        // Data files whose bytes would not change are not written again: they keep their inode,
        // their time and every reader (only the model names them anew). --rewrite writes them
        // all.
        m_kept = m_options.rewrite ? std::vector<bool>(m_plan.files.size(), false)
                                   : keptDataFiles(m_model, m_path, m_plan, m_options);
        if (!m_options.force)
            if (auto conflicts = conflictsOf(m_model, m_path, m_plan, m_kept); !conflicts.empty())
                return Error{joinMessages(conflicts), ErrorKind::ConsentNeeded};
        // The bytes of a kept file are not copied, so not checked while copying: checked here, as
        // a save that writes nothing checks them, never carried forward unread.
        if (std::find(m_kept.begin(), m_kept.end(), true) != m_kept.end())
            if (Status s = checkChecksums(m_model, m_options); !s)
                return s.error().prefixed(m_cannot);
        return {};
    }

    // The sources held still, the protos to write loaded, and (in place) the files the model
    // reads before the save noted.
    Status prepareToWrite()
    {
        // Every file the save reads holds still until its bytes are copied, or the save fails.
        auto sources = SourceWatch::start(m_model, m_options.cancel);
        if (!sources)
            return sources.error().prefixed(m_cannot);
        m_sources.emplace(std::move(*sources));
        // Writing needs the model's protos (an unchanged save does not), but not those of the
        // inline tensors that stay inline: they are written back from their bytes.
        if (Status s = m_model.loadProtosLeavingOut([&](size_t i) {
                return !m_plan.tensors[i].external && !m_model.tensors()[i].isExternal();
            });
            !s)
            return s.error().prefixed(m_cannot);
        m_inPlace = !m_model.path().empty() && samePathOrFile(m_path, m_model.path());
        if (m_inPlace)
            m_readBefore = filesReadBy(m_model);
        return {};
    }

    // 1. New data into temporaries beside the final files.
    Status writeData()
    {
        m_writer.emplace(m_model, m_plan, m_options);
        auto written = writeDataTemps(m_plan, m_dir, *m_writer, m_cleanup, m_kept);
        if (!written)
            return written.error().prefixed(m_cannot);
        m_targets = std::move(*written);
        crashPoint("data-written");
        return {};
    }

    // 2. The model, once naming the temporaries and once naming the final files (a kept file
    // by its final name in both).
    Status writeModels()
    {
        for (const auto& name : m_plan.files)
            m_finalNames.push_back(fs::path(name).lexically_normal().generic_string());
        m_tempNames = m_finalNames;
        for (const auto& t : m_targets)
            m_tempNames[t.file] = t.temp.path.lexically_relative(m_dir).generic_string();
        const std::map<size_t, std::string> checksums = checksumsToWrite();
        // The model is streamed below: the raw_data of tensors that stay inline (or come back
        // inline) is copied file to file from where it lies, never held in memory; a failure puts
        // the model back as it was.
        m_splices = splicesOf(m_model, m_plan, *m_writer);
        m_rewrite.emplace(m_model);
        if (Status s = m_rewrite->apply(
                m_plan, m_tempNames, *m_writer, checksums, TensorRewrite::Inline::Spliced);
            !s)
            return s.error().prefixed(m_cannot);
        if (!m_targets.empty()) {
            auto temp = writeModelTemp(m_model, m_path, m_splices, *m_writer, true, m_cleanup);
            if (!temp)
                return temp.error().prefixed(m_cannot);
            m_modelViaTemps = std::move(*temp);
        }
        m_rewrite->relocate(m_finalNames);
        // A remote model's payloads come from the first model file, not from the server again.
        auto modelFinal = writeModelTemp(m_model, m_path, m_splices, *m_writer, !m_modelViaTemps,
            m_cleanup, m_model.isRemote() && m_modelViaTemps ? &*m_modelViaTemps : nullptr);
        if (!modelFinal)
            return modelFinal.error().prefixed(m_cannot);
        m_modelFinal = std::move(*modelFinal);
        crashPoint("models-written");
        m_stale = readsReplacedBy(m_model, m_targets);
        return {};
    }

    // The checksum key of each tensor: as written, and a tensor of a kept file keeps its own
    // (its bytes are not read again).
    std::map<size_t, std::string> checksumsToWrite() const
    {
        std::map<size_t, std::string> checksums = m_writer->checksums();
        for (size_t i = 0; i < m_plan.tensors.size(); ++i)
            if (const PlannedTensor& p = m_plan.tensors[i]; p.external && m_kept[p.file])
                if (const TensorInfo& t = m_model.tensors()[i]; !t.external->checksum->empty())
                    checksums.emplace(i, *t.external->checksum);
        return checksums;
    }

    // Everything is copied: a source written to meanwhile, or replaced on its server after it
    // was read, would have given a mix of bytes.
    Status verifySources()
    {
        if (Status s = m_sources->stillUnchanged(m_options.cancel); !s)
            return s.error().prefixed(m_cannot);
        m_sources->release();
        return {};
    }

    // 3. Commit: the model now names the complete new data (under its temporary names).
    Status commit()
    {
        const fs::path& commitFrom
            = m_modelViaTemps ? m_modelViaTemps->file.path : m_modelFinal->file.path;
        if (Status s = renameFile(commitFrom, m_path, "rename-model-temp"); !s)
            return s.error().prefixed(m_cannot);
        m_cleanup.release(); // from here on nothing that was committed is deleted
        m_finish.check(syncFolder(m_dir), kMayRevert);
        crashPoint("model-temp-committed");
        return {};
    }

    // 4 to 6, when the model committed names temporaries: each failure a warning, the model
    // left naming what is complete.
    void giveFinalNames()
    {
        if (!m_modelViaTemps)
            return;
        m_finalNamesOk = swapDataIn() && commitFinalNames();
        if (!m_finalNamesOk) {
            m_finish.unlinkFile(m_modelFinal->file.path, "unlink-model-temp", // never committed
                "it is a copy of the new model that was never committed; onnx-repack clean "
                "removes it");
        } else {
            // 6. The temporary names go.
            for (const auto& t : m_targets)
                m_finish.unlinkFile(t.temp.path, "unlink-temp",
                    "it is a leftover copy of " + t.finalPath.filename().string()
                        + "; onnx-repack clean removes it");
            crashPoint("cleaned");
        }
    }

    // 4. Each data file under its final name, the temporary name kept valid meanwhile.
    bool swapDataIn()
    {
        for (const auto& t : m_targets) {
            if (!m_finish.check(swapIn(t),
                    m_path.filename().string() + " keeps naming its data by the temporary name "
                        + t.temp.path.filename().string()
                        + " (complete and valid); saving the model again gives it its final "
                          "name"))
                return false;
            m_finish.check(syncFolder(t.finalPath.parent_path()), kMayRevert);
            crashPoint("data-swapped");
        }
        return true;
    }

    // 5. The model names the final files.
    bool commitFinalNames()
    {
        if (!m_finish.check(renameFile(m_modelFinal->file.path, m_path, "rename-model-final"),
                m_path.filename().string()
                    + " keeps naming its data by temporary names (complete and valid); saving "
                      "the model again gives them their final names"))
            return false;
        m_finish.check(syncFolder(m_dir), kMayRevert);
        crashPoint("model-final-committed");
        return true;
    }

    // The report of the committed save, the model in memory made what is on disk and the files
    // it stopped using dealt with.
    SaveReport finishReport()
    {
        const uint64_t dataWritten = reportPlan();
        adoptSave();
        const std::vector<fs::path> finals = reportDataFiles();
        if (m_inPlace)
            dropUnused(m_readBefore, finals, m_path, m_options.removeUnused, m_finish, m_report);
        if (m_finalNamesOk) {
            std::set<std::string> names;
            for (const auto& f : finals)
                names.insert(f.filename().string());
            removeOwnLeftovers(m_model, names);
        }
        m_report.modelPath = m_path;
        m_report.warnings.insert(
            m_report.warnings.begin(), m_plan.notes.begin(), m_plan.notes.end());
        m_report.bytesWritten = committedModel().written.bytes + dataWritten;
        m_report.seconds = secondsSinceStart();
        return std::move(m_report);
    }

    // What the report says of the plan, taken before the model is indexed again: the plan's
    // entry per tensor goes first (two indexes and a plan of millions of tensors at once
    // would be the save's peak). Returns the bytes of the data files written.
    uint64_t reportPlan()
    {
        m_report.dataBytes
            = std::accumulate(m_plan.fileBytes.begin(), m_plan.fileBytes.end(), uint64_t(0));
        uint64_t dataWritten = 0;
        for (const auto& t : m_targets)
            dataWritten += m_plan.fileBytes[t.file];
        m_report.paddingBytes = paddingBytes(m_plan);
        for (const auto& p : m_plan.tensors)
            (p.external ? m_report.externalTensors : m_report.inlineTensors)++;
        std::vector<PlannedTensor>().swap(m_plan.tensors);
        return dataWritten;
    }

    // The in-memory model now is what is on disk; reads through replaced files fail.
    void adoptSave()
    {
        m_rewrite->relocate(m_finalNamesOk ? m_finalNames : m_tempNames);
        m_rewrite->commit();
        const ModelTemp& committed = committedModel();
        m_model.adoptSave({m_path, committed.identity, committed.written.bytes,
            payloadRanges(m_splices, committed), m_stale,
            "replaced by a save to " + m_path.string()});
    }

    // Every data file the model reads now, kept or written, in plan order, into the report;
    // returns their final paths, the model's first.
    std::vector<fs::path> reportDataFiles()
    {
        std::vector<fs::path> finals{m_path};
        for (size_t f = 0; f < m_finalNames.size(); ++f) {
            finals.push_back((m_dir / m_finalNames[f]).lexically_normal());
            m_report.dataFiles.push_back(
                (m_dir / (m_finalNamesOk ? m_finalNames : m_tempNames)[f]).lexically_normal());
            if (m_kept[f])
                m_report.keptFiles.push_back(m_report.dataFiles.back());
        }
        return finals;
    }

    const ModelTemp& committedModel() const
    {
        return m_finalNamesOk ? *m_modelFinal : *m_modelViaTemps;
    }
    double secondsSinceStart() const
    {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
    }

    static constexpr const char* kMayRevert
        = "after a power loss the previous model may come back; the new one is complete";

    Model& m_model;
    const SaveOptions& m_options;
    const std::chrono::steady_clock::time_point m_started;
    const fs::path m_path;
    const fs::path m_dir;
    const std::string m_cannot;
    SavePlan m_plan;
    DataFolders m_folders;
    FolderLock m_lock;
    std::vector<bool> m_kept;
    std::optional<SourceWatch> m_sources;
    bool m_inPlace = false;
    std::vector<fs::path> m_readBefore; // in place: the data files the model read
    TempCleanup m_cleanup;
    std::optional<DataWriter> m_writer;
    std::vector<DataTarget> m_targets;
    std::vector<std::string> m_finalNames;
    std::vector<std::string> m_tempNames;
    Splices m_splices;
    std::optional<TensorRewrite> m_rewrite;
    std::optional<ModelTemp> m_modelViaTemps;
    std::optional<ModelTemp> m_modelFinal;
    std::vector<fs::path> m_stale;
    SaveReport m_report;
    Finisher m_finish{m_report.warnings};
    bool m_finalNamesOk = true;
};

Result<SaveReport> saveUnguarded(Model& model, const fs::path& path, const SaveOptions& options)
{
    ModelSave save(model, path, options);
    return save.run();
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
    if (!isUnder(where, root))
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
