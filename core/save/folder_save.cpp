#include "folder_save.h"

#include "clean.h"
#include "core/checksum.h"
#include "core/file_names.h"
#include "core/format.h"
#include "core/inspect/folder_inspect.h"
#include "core/inspect/readers.h"
#include "core/mapped_memory.h"
#include "core/model/model.h"
#include "core/paths.h"
#include "core/plan/save_plan.h"
#include "core/posix_file.h"
#include "core/save_lock.h"
#include "crash_point.h"
#include "data_writer.h"
#include "each_graph_save.h"
#include "output_folder.h"
#include "save.h"
#include "save_conflicts.h"
#include "save_steps.h"
#include "shared_layout.h"
#include "source_watch.h"
#include "tensor_rewrite.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unistd.h>

namespace fs = std::filesystem;

namespace repack {
namespace {

// One graph of the set, from its load to its commit. Members are destroyed in reverse order:
// an uncommitted rewrite rolls back while its model still exists.
struct Graph {
    std::string name;
    fs::path outPath;
    std::unique_ptr<Model> model;
    SavePlan plan;
    std::vector<fs::path> readBefore; // in place: the data files it read
    std::optional<DataWriter> writer;
    std::optional<SourceWatch> sources;
    std::optional<TensorRewrite> rewrite;
    Splices splices;
    std::optional<ModelTemp> viaTemp; // naming the shared file's temporary
    std::optional<ModelTemp> final; // naming the shared file
    bool committed = false;
    bool external() const { return !plan.files.empty(); }
    // Read from a file on this disk; a remote graph's model file is on a server (no path).
    bool readLocally() const { return !model->path().empty(); }
};

Error cancelledError()
{
    return Error{"the folder save was cancelled; nothing changed", ErrorKind::Cancelled};
}

class FolderSave {
public:
    FolderSave(FolderAccess& folder, const fs::path& outDir, const FolderSaveOptions& options)
        : m_folder(folder)
        , m_dir(folder.localPath().empty() ? fs::path() : normalFolder(folder.localPath()))
        , m_outDir(normalFolder(outDir))
        , m_options(options)
        , m_layout(options.layout, options.controls)
        , m_cannot("cannot save the folder " + shownName(folder) + ": ")
    {
        m_layout.dataFile = options.sharedData;
        m_layout.dedupe = false; // each content is stored once across the folder: layOut()
        m_layout.progress = {}; // the shared file reports its own progress
        m_shared = (m_outDir / options.sharedData).lexically_normal();
    }

    Result<FolderSaveReport> run()
    {
        const auto started = std::chrono::steady_clock::now();
        if (Status s = load(); !s)
            return s.error().prefixed(m_cannot);
        if (m_options.dryRun)
            return plan();
        auto created = createOutputFolders(m_outDir / m_graphs.front().name);
        if (!created)
            return created.error().prefixed(m_cannot);
        m_createdFolders = std::move(*created);
        Result<FolderSaveReport> report = runLocked();
        if (!report || report->unchanged)
            removeCreatedFolders(m_createdFolders);
        if (report)
            report->seconds
                = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return report;
    }

private:
    Status load()
    {
        if (Status s = checkSharedLayout(m_options.layout, m_options.sharedData); !s)
            return s;
        if (Status s = checkDataFileName(m_options.sharedData); !s)
            return Error::usage("--shared-data " + m_options.sharedData + ": " + s.error().message);
        if (isModelName(fs::path(m_options.sharedData).filename().string()))
            return Error::usage(
                "--shared-data " + m_options.sharedData + ": a data file cannot be named .onnx");
        auto chosen = chosenModels(m_folder, m_options.models);
        if (!chosen)
            return chosen.error();
        for (const std::string& name : *chosen) {
            Graph& g = m_graphs.emplace_back();
            g.name = name;
            g.outPath = m_outDir / name;
            if (g.outPath == m_shared)
                return Error::usage("--shared-data " + m_options.sharedData + " is the model "
                    + name + " of the output folder");
            auto model = m_folder.open(name);
            if (!model)
                return model.error();
            g.model = std::move(*model);
            // The single save's plan, with its rules for what cannot be carried forward and for
            // what readers need inline while building the graph (a shape input stored
            // externally comes back inline).
            auto plan = planSave(*g.model, g.outPath, m_layout);
            if (!plan)
                return plan.error().prefixed(name + ": ");
            g.plan = std::move(*plan);
            if (g.plan.files.size() > 1
                || (g.external()
                    && (m_outDir / g.plan.files.front()).lexically_normal() != m_shared))
                return Error::internal(name + ": the plan does not write one shared data file");
        }
        return checkAliasesOfShared();
    }

    // The shared name must lead to no folder and to no model of the set, read or written.
    Status checkAliasesOfShared() const
    {
        std::vector<ModelFileRole> models;
        for (const Graph& g : m_graphs) {
            models.push_back({g.outPath, "the model file of " + g.name});
            if (g.readLocally())
                models.push_back({g.model->path(), "the model file of " + g.name});
        }
        if (Status s = checkDataAliases({m_options.sharedData}, {m_shared}, models); !s)
            return s.error().prefixed("--shared-data: ");
        return {};
    }

    // Where every content goes in the shared file (core/save/shared_layout.h).
    Status layOut()
    {
        std::vector<const Model*> models;
        std::vector<SavePlan*> plans;
        for (Graph& g : m_graphs) {
            models.push_back(g.model.get());
            plans.push_back(&g.plan);
        }
        // The bytes compared to confirm identical contents: on a folder of GiB, the first phase
        // of a save that takes time.
        ProgressCallback compared;
        if (m_options.controls.progress)
            compared = [this](const Progress& p) {
                Progress phase = p;
                phase.phase = kPhaseComparing;
                m_options.controls.progress(phase);
            };
        auto laid = layOutShared(models, plans, m_layout, compared);
        if (!laid)
            return laid.error();
        m_contents = std::move(*laid);
        return {};
    }

    // Every graph already reads the shared file at the planned ranges, and it is that size.
    bool unchanged() const
    {
        if (m_layout.rewrite)
            return false;
        for (const Graph& g : m_graphs)
            if (!inPlace(g) || !planKeepsLayout(*g.model, g.outPath, g.plan, m_layout))
                return false;
        return true;
    }

    // The graph is saved over the file it was read from (never a remote graph: it has no path).
    static bool inPlace(const Graph& g)
    {
        return g.readLocally() && samePathOrFile(g.outPath, g.model->path());
    }

    // Every folder a model reading the graphs' files could be in, and the set itself.
    ReaderSearch search(bool excludeSet) const
    {
        ReaderSearch out{{m_outDir}, {}};
        if (!m_dir.empty())
            out.roots.push_back(m_dir);
        if (excludeSet)
            for (const Graph& g : m_graphs) {
                out.exclude.push_back(g.outPath);
                if (g.readLocally())
                    out.exclude.push_back(g.model->path());
            }
        return out;
    }

    // Replacing the shared file needs consent unless only graphs of the set read it; an
    // output model file, only when a model outside the set reads it as data. Every conflict is
    // said, each with the models that read it.
    Status consent() const
    {
        if (m_layout.force)
            return {};
        std::vector<fs::path> replaced{m_shared};
        for (const Graph& g : m_graphs)
            if (!inPlace(g))
                replaced.push_back(g.outPath);
        const std::vector<Readers> readers = readersOf(replaced, search(true));
        std::string conflicts;
        for (size_t i = 0; i < replaced.size(); ++i) {
            const auto id = fileIdOf(replaced[i]);
            if (!id)
                continue;
            std::string why = readers[i].describe();
            if (i == 0 && why.empty()) {
                bool readBySet = false;
                for (const Graph& g : m_graphs)
                    for (const fs::path& p : filesReadBy(*g.model))
                        readBySet |= fileIdOf(p) == id;
                if (readBySet)
                    continue;
                why = "no graph of the set reads it";
            }
            if (i > 0 && readers[i].models.empty())
                continue; // a model file is read as a model: only a reader of it as data counts
            conflicts += (conflicts.empty() ? "" : "; ") + replaced[i].string()
                + " would be replaced: " + why;
        }
        if (conflicts.empty())
            return {};
        return Error{conflicts
                + "; --force replaces it (those models would read wrong bytes), or "
                  "choose another --shared-data name",
            ErrorKind::ConsentNeeded};
    }

    // What the save would do, nothing locked or written.
    Result<FolderSaveReport> plan()
    {
        if (Status s = layOut(); !s)
            return s.error().prefixed(m_cannot);
        m_report.unchanged = unchanged();
        if (Status s = consent(); !s)
            m_report.consentNeeded = s.error().message;
        m_report.bytesBefore = bytesNow();
        if (!m_report.unchanged)
            for (const Graph& g : m_graphs)
                if (inPlace(g))
                    for (const fs::path& p : filesReadBy(*g.model))
                        if (wouldRemove(p))
                            m_report.removed.push_back(p);
        std::sort(m_report.removed.begin(), m_report.removed.end());
        m_report.removed.erase(
            std::unique(m_report.removed.begin(), m_report.removed.end()), m_report.removed.end());
        fillCounts();
        if (m_options.diffs)
            for (const Graph& g : m_graphs)
                m_report.diffs.push_back(diffPlan(*g.model, g.plan));
        return std::move(m_report);
    }

    // The graphs' model files and the data files they read now, each file once.
    uint64_t bytesNow() const
    {
        uint64_t bytes = 0;
        std::set<FileId> seen;
        for (const Graph& g : m_graphs) {
            bytes += g.model->fileBytes();
            for (const fs::path& p : filesReadBy(*g.model))
                if (auto status = statusAt(p);
                    status && seen.insert(status->stamp.identity.id).second)
                    bytes += status->stamp.identity.size;
        }
        return bytes;
    }

    // A file the graphs read before that the save may remove once no model reads it: one that
    // exists (`id`), in the output folder (outside it is not the folder's), not the shared file,
    // not a temporary (an interrupted save's, removed as a leftover).
    bool removalCandidate(const fs::path& path, const std::optional<FileId>& id,
        const std::optional<FileId>& sharedId) const
    {
        return id && id != sharedId && isUnder(path, m_outDir)
            && !isTempName(path.filename().string());
    }

    // A data file a graph reads now that an in-place save would remove: in the folder, not the
    // shared file, read by no model of the folder outside the set.
    bool wouldRemove(const fs::path& path) const
    {
        if (!removalCandidate(path, fileIdOf(path), fileIdOf(m_shared)))
            return false;
        return readersOf(path, search(true)).none();
    }

    Result<FolderSaveReport> runLocked()
    {
        std::vector<fs::path> folders{m_outDir, m_shared.parent_path()};
        auto lock = FolderLock::acquire(folders, m_layout.lockWaitMs, m_layout.cancel);
        if (!lock)
            return lock.error().prefixed(m_cannot);
        crashPoint("locked");
        for (const Graph& g : m_graphs)
            if (g.readLocally() && !namesFile(g.model->path(), g.model->fileIdentity()))
                return Error{m_cannot + g.model->path().string()
                        + " changed while the folder save waited (another save?); try again",
                    ErrorKind::Changed};
        if (Status s = layOut(); !s)
            return s.error().prefixed(m_cannot);
        if (unchanged())
            return unchangedReport();
        if (Status s = consent(); !s)
            return s.error().prefixed(m_cannot);
        for (Graph& g : m_graphs) {
            auto sources = SourceWatch::start(*g.model, m_layout.cancel);
            if (!sources)
                return sources.error().prefixed(m_cannot);
            g.sources.emplace(std::move(*sources));
            if (Status s = g.model->loadProtos(); !s)
                return s.error().prefixed(m_cannot);
            if (inPlace(g))
                g.readBefore = filesReadBy(*g.model);
            g.writer.emplace(*g.model, g.plan, m_layout);
        }
        m_report.bytesBefore = bytesNow();

        TempCleanup cleanup;
        auto temp = writeShared(cleanup);
        if (!temp)
            return temp.error().prefixed(m_cannot);
        DataTarget target{0, m_shared, std::move(*temp)};
        crashPoint("data-written");
        if (Status s = writeModels(target, cleanup); !s)
            return s.error().prefixed(m_cannot);
        crashPoint("models-written");
        std::vector<std::vector<fs::path>> stale;
        for (Graph& g : m_graphs) {
            stale.emplace_back(); // the paths through which it reads the file replaced
            for (const fs::path& p : filesReadBy(*g.model))
                if (fileIdOf(p) && fileIdOf(p) == fileIdOf(m_shared))
                    stale.back().push_back(p);
        }
        for (Graph& g : m_graphs) {
            if (Status s = g.sources->stillUnchanged(m_layout.cancel); !s)
                return s.error().prefixed(m_cannot);
        }
        for (Graph& g : m_graphs)
            g.sources->release();
        if (m_layout.cancel && m_layout.cancel->isCancelled())
            return cancelledError();

        if (Status s = commit(target, cleanup); !s)
            return s.error().prefixed(m_cannot);
        finish(target, stale);
        return std::move(m_report);
    }

    // Temporaries of killed saves of these names (the shared file under its temporary name,
    // say), once every graph names the final files: the lock is held, so no live save owns them.
    void removeLeftoversOfOwnNames()
    {
        std::set<std::string> finals{m_shared.filename().string()};
        for (const Graph& g : m_graphs)
            finals.insert(g.name);
        for (const Graph& g : m_graphs)
            removeOwnLeftovers(*g.model, finals);
    }

    FolderSaveReport unchangedReport()
    {
        removeLeftoversOfOwnNames(); // as the rewrite would
        m_report.unchanged = true;
        fillCounts();
        m_report.bytesBefore = m_report.bytesAfter;
        return std::move(m_report);
    }

    void fillCounts()
    {
        m_report.folder = m_outDir;
        m_report.sharedData = m_shared;
        m_report.sharedBytes = m_contents.bytes;
        m_report.sharedRanges = m_contents.ranges.size();
        m_report.models.clear();
        m_report.bytesAfter = m_contents.bytes;
        for (const Graph& g : m_graphs) {
            m_report.models.push_back(g.name);
            for (const PlannedTensor& p : g.plan.tensors)
                if (p.external) {
                    ++m_report.externalTensors;
                    m_report.externalBytes += p.length;
                }
            std::error_code ec;
            const auto size = fs::file_size(g.outPath, ec);
            m_report.bytesAfter += ec ? 0 : size;
        }
    }

    // 1. The shared file's temporary: each range once, from the first tensor that holds it.
    Result<TempFile> writeShared(TempCleanup& cleanup)
    {
        auto temp = createReplacementFor(m_shared);
        if (!temp)
            return temp.error();
        cleanup.add(temp->path);
        const int fd = temp->fd.get();
        Progress progress;
        progress.bytesTotal = m_contents.bytes;
        progress.phase = kPhaseWriting;
        for (SharedRange& range : m_contents.ranges) {
            Graph& g = m_graphs[range.graph];
            if (m_layout.cancel && m_layout.cancel->isCancelled())
                return cancelledError();
            if (g.writer->payloadLength(range.tensor)) {
                if (Status s
                    = g.writer->copyPayload(range.tensor, fd, range.offset, temp->path, false);
                    !s)
                    return s.error();
                if (auto it = g.writer->checksums().find(range.tensor);
                    it != g.writer->checksums().end())
                    range.checksum = it->second;
            } else { // held in the proto (small raw, typed fields): through the model
                auto bytes = g.model->read(range.tensor);
                if (!bytes)
                    return bytes.error();
                if (Status s = pwriteAll(fd, bytes->bytes(), range.offset, temp->path); !s)
                    return s.error();
                if (m_layout.checksum)
                    range.checksum = Sha1::of(bytes->bytes());
            }
            progress.bytesDone += range.length;
            progress.tensor = g.model->tensors()[range.tensor].name;
            if (m_options.controls.progress)
                m_options.controls.progress(progress);
        }
        if (::ftruncate(fd, static_cast<off_t>(m_contents.bytes)) != 0)
            return Error::io(systemMessage("cannot size", temp->path));
        if (Status s = fsyncFile(fd, temp->path); !s)
            return s.error();
        temp->fd = UniqueFd();
        if (Status s = fsyncDirectory(m_shared.parent_path()); !s)
            return s.error();
        return temp;
    }

    // 2. Each graph's model, naming the temporary and naming the shared file.
    Status writeModels(const DataTarget& target, TempCleanup& cleanup)
    {
        const std::vector<std::string> tempNames{
            target.temp.path.lexically_relative(m_outDir).generic_string()};
        const std::vector<std::string> finalNames{
            m_shared.lexically_relative(m_outDir).generic_string()};
        for (size_t gi = 0; gi < m_graphs.size(); ++gi) {
            Graph& g = m_graphs[gi];
            std::map<size_t, std::string> checksums;
            for (size_t t = 0; t < g.plan.tensors.size(); ++t)
                if (auto it = m_contents.rangeOf.find({gi, t}); it != m_contents.rangeOf.end())
                    if (const std::string& sum = m_contents.ranges[it->second].checksum;
                        !sum.empty())
                        checksums[t] = sum;
            g.splices = splicesOf(*g.model, g.plan, *g.writer);
            g.rewrite.emplace(*g.model);
            if (Status s = g.rewrite->apply(
                    g.plan, tempNames, *g.writer, checksums, TensorRewrite::Inline::Spliced);
                !s)
                return s.error().prefixed(g.name + ": ");
            if (g.external()) {
                auto via
                    = writeModelTemp(*g.model, g.outPath, g.splices, *g.writer, false, cleanup);
                if (!via)
                    return via.error();
                g.viaTemp = std::move(*via);
            }
            g.rewrite->relocate(finalNames);
            // A remote graph's inline payloads come from its first model file, not the server.
            auto final = writeModelTemp(*g.model, g.outPath, g.splices, *g.writer, false, cleanup,
                g.model->isRemote() && g.viaTemp ? &*g.viaTemp : nullptr);
            if (!final)
                return final.error();
            g.final = std::move(*final);
        }
        return {};
    }

    // 3. Graph by graph, each commits: it reads the complete temporary (or, with no external
    // tensor, its final model). A rename that fails leaves that graph and the rest as they were.
    // The first rename failing is an error: nothing changed (the caller's cleanup removes the
    // temporaries and the graphs roll back). A later one is a warning: the graphs before it stand.
    Status commit(DataTarget& target, TempCleanup& cleanup)
    {
        for (size_t i = 0; i < m_graphs.size(); ++i) {
            Graph& g = m_graphs[i];
            const fs::path& from = g.viaTemp ? g.viaTemp->file.path : g.final->file.path;
            if (Status s = renameFile(from, g.outPath, "rename-model-temp"); !s) {
                if (i == 0)
                    return s;
                m_report.warnings.push_back(s.error().message + "; " + g.name
                    + " and the graphs after it keep their old layout");
                m_commitFailed = true;
                break;
            }
            if (i == 0)
                cleanup.release(); // from the first commit on, nothing committed is removed
            g.committed = true;
            crashPoint("model-temp-committed");
        }
        for (Graph& g : m_graphs)
            if (!g.committed) {
                unlinkQuietly(g.final->file.path);
                if (g.viaTemp)
                    unlinkQuietly(g.viaTemp->file.path);
            }
        warnIf(syncFolder(m_outDir));
        if (std::none_of(m_graphs.begin(), m_graphs.end(),
                [](const Graph& g) { return g.committed && g.viaTemp; }))
            unlinkQuietly(target.temp.path); // no graph reads it
        return {};
    }

    // 4-7. The shared file under its name, the graphs naming it, the temporary and the files no
    // model reads any more gone.
    void finish(DataTarget& target, const std::vector<std::vector<fs::path>>& stale)
    {
        const bool anyExternal = std::any_of(m_graphs.begin(), m_graphs.end(),
            [](const Graph& g) { return g.committed && g.viaTemp; });
        bool finalNames = anyExternal && !m_commitFailed;
        if (finalNames) {
            finalNames = check(swapIn(target),
                "the graphs keep naming their shared data by its temporary name "
                    + target.temp.path.filename().string()
                    + " (complete and valid); saving the folder again gives it its final name");
            if (finalNames) {
                warnIf(syncFolder(m_shared.parent_path()));
                crashPoint("data-swapped");
            }
        }
        for (Graph& g : m_graphs) {
            if (!g.committed || !g.viaTemp)
                continue;
            bool named = finalNames
                && check(renameFile(g.final->file.path, g.outPath, "rename-model-final"),
                    g.name
                        + " keeps naming the shared data by its temporary name (complete and "
                          "valid); saving the folder again gives it its final name");
            if (!named) {
                unlinkQuietly(g.final->file.path);
                finalNames = false;
            } else {
                crashPoint("model-final-committed");
            }
        }
        warnIf(syncFolder(m_outDir));
        if (finalNames)
            unlinkQuietly(target.temp.path);
        crashPoint("cleaned");

        const std::vector<std::string> finalLocation{(finalNames ? m_shared : target.temp.path)
                                                         .lexically_relative(m_outDir)
                                                         .generic_string()};
        for (size_t i = 0; i < m_graphs.size(); ++i) {
            Graph& g = m_graphs[i];
            if (!g.committed) {
                g.rewrite.reset(); // rolled back: the graph is as it was
                continue;
            }
            g.rewrite->relocate(finalLocation);
            g.rewrite->commit();
            const ModelTemp& on = (g.viaTemp && !finalNames) ? *g.viaTemp : *g.final;
            g.model->adoptSave(
                {g.outPath, on.identity, on.written.bytes, payloadRanges(g.splices, on), stale[i],
                    "replaced by a save of the folder " + m_outDir.string()});
        }
        if (finalNames && !m_commitFailed) {
            removeUnused();
            removeLeftoversOfOwnNames();
        }
        fillCounts();
    }

    // 7. In place: the data files the graphs read before that no model of the folder reads now.
    void removeUnused()
    {
        std::set<FileId> seen;
        const auto sharedId = fileIdOf(m_shared);
        for (const Graph& g : m_graphs)
            for (const fs::path& path : g.readBefore) {
                const auto id = fileIdOf(path);
                if (!removalCandidate(path, id, sharedId) || !seen.insert(*id).second)
                    continue;
                // Every graph of the set reads the shared file now: any reader is another model.
                const Readers readers = readersOf(path, search(false));
                if (!readers.none()) {
                    if (!readers.unknown.empty())
                        m_report.warnings.push_back(
                            path.string() + " is kept: " + readers.describe());
                    continue;
                }
                if (failPoint("unlink-unused") || ::unlink(path.c_str()) != 0) {
                    m_report.warnings.push_back(
                        systemMessage("cannot remove", path, failPoint("unlink-unused") ? EIO : -1)
                        + "; no graph reads it any more: remove it by hand");
                    continue;
                }
                m_report.removed.push_back(path);
            }
        if (!m_report.removed.empty())
            warnIf(syncFolder(m_outDir));
    }

    bool check(Status status, const std::string& consequence)
    {
        if (!status)
            m_report.warnings.push_back(status.error().message + "; " + consequence);
        return status.ok();
    }
    void warnIf(Status status)
    {
        check(std::move(status),
            "after a power loss the previous layout may come back; the new one is complete");
    }
    void unlinkQuietly(const fs::path& path)
    {
        if (::unlink(path.c_str()) != 0 && errno != ENOENT)
            m_report.warnings.push_back(systemMessage("cannot remove", path)
                + "; it is a leftover temporary: onnx-repack clean removes it");
    }

    FolderAccess& m_folder;
    const fs::path m_dir; // the folder read, empty when it is remote
    const fs::path m_outDir;
    const FolderSaveOptions& m_options;
    SaveOptions m_layout;
    const std::string m_cannot;
    fs::path m_shared;
    std::deque<Graph> m_graphs; // stable addresses: each writer holds its graph's plan
    SharedLayout m_contents; // each content's range in the shared file
    std::vector<fs::path> m_createdFolders;
    bool m_commitFailed = false;
    FolderSaveReport m_report;
};

} // namespace

Result<FolderSaveReport> saveFolder(
    FolderAccess& folder, const fs::path& outDir, const FolderSaveOptions& options)
{
    const std::string cannot = "cannot save the folder " + shownName(folder);
    // A remote folder is read, never written: saved into a local folder elsewhere,
    // which is never the Hugging Face cache it may have been read from.
    if (folder.localPath().empty()) {
        if (outDir.empty())
            return Error::usage(cannot + ": it is read from a server; name a local output folder");
        if (Status s = outsideHubCache(outDir); !s)
            return s.error().prefixed(cannot + ": ");
    }
    return guardMemory(cannot, [&]() -> Result<FolderSaveReport> {
        if (options.sharedData.empty())
            return saveEachGraph(folder, outDir, options);
        FolderSave save(folder, outDir, options);
        return save.run();
    });
}

Result<FolderSaveReport> saveFolder(
    const fs::path& dir, const fs::path& outDir, const FolderSaveOptions& options)
{
    return saveFolder(*localFolder(dir), outDir, options);
}

} // namespace repack
