#include "clean.h"

#include "core/file_identity.h"
#include "core/file_names.h"
#include "core/inspect/folder_inspect.h"
#include "core/inspect/folder_listing.h"
#include "core/inspect/folder_scan.h"
#include "core/inspect/readers.h"
#include "core/model/model.h"
#include "core/posix_file.h"
#include "core/save_lock.h"
#include "save.h"
#include "save_steps.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace repack {

namespace {

// The locks of `folders` without waiting: clean never runs beside a save. The error names the
// folder a running save holds ("run clean again when it has finished").
Result<FolderLock> lockNow(const std::vector<fs::path>& folders)
{
    auto lock = FolderLock::acquire(folders, 0, nullptr);
    if (lock)
        return lock;
    for (const auto& dir : folders)
        if (FolderLock::isHeld(dir))
            return Error{"another save is running in " + dir.string()
                    + "; run clean again when it has finished",
                ErrorKind::Busy};
    return lock.error();
}

// A save temporary that models name: a commit a killed save left half done.
struct Interrupted {
    fs::path temp; // as the models name it
    fs::path final; // the name it stands for
    std::vector<fs::path> models; // every model naming it
};

// The temporaries `model` names, each with every model naming it (from the model's folder or
// one between it and the temporary).
std::vector<Interrupted> interruptedCommits(const Model& model)
{
    std::vector<Interrupted> out;
    for (const fs::path& path : filesReadBy(model)) {
        const std::string final = finalNameOfTemp(path.filename().string());
        if (final.empty() || !fileIdOf(path))
            continue;
        const Readers naming = readersOf(path, {{model.baseDir()}, {}}, ReadMatch::Name);
        out.push_back({path, path.parent_path() / final, naming.models});
    }
    return out;
}

// Step 4 of the protocol for `i`, when it did not happen: the temporary's bytes under the final
// name (link, then rename over it). A final file another model reads is not replaced: it may
// not be (the models naming the temporary read it, complete, with one link). False: skipped,
// with a warning saying why.
Result<bool> swapInterrupted(const Interrupted& i, std::vector<std::string>& warnings)
{
    std::vector<fs::path> folders{i.final.parent_path()};
    for (const auto& m : i.models)
        folders.push_back(m.parent_path());
    auto lock = lockNow(folders);
    if (!lock)
        return lock.error();
    const auto temp = fileIdOf(i.temp), final = fileIdOf(i.final);
    if (!temp || final == temp)
        return true;
    if (final) {
        // Only a data file the save meant to replace: a regular file with a data file's name,
        // never a model, a symlink or anything else a crafted temporary name could point at.
        struct stat st { };
        if (::lstat(i.final.c_str(), &st) != 0 || !S_ISREG(st.st_mode)
            || classifyFileName(i.final.filename().string()) != FileType::Data) {
            warnings.push_back(i.temp.string() + " keeps its temporary name (complete; every "
                + "reader accepts it): " + i.final.string()
                + " is not a data file this tool replaces; repacking the model gives it a name "
                  "of its own");
            return false;
        }
        ReaderSearch search{{}, i.models};
        for (const auto& m : i.models)
            search.roots.push_back(m.parent_path());
        if (const Readers others = readersOf(i.final, search); !others.none()) {
            warnings.push_back(i.temp.string() + " keeps its temporary name (complete; every "
                + "reader accepts it): its final name " + i.final.string() + " is in use ("
                + others.describe() + "); repacking the model gives it a name of its own");
            return false;
        }
    }
    const DataTarget target{0, i.final, TempFile{i.temp, UniqueFd()}};
    if (Status s = swapIn(target); !s)
        return s.error();
    if (Status s = fsyncDirectory(i.final.parent_path()); !s)
        warnings.push_back(s.error().message + "; after a power loss " + i.final.string()
            + " may be the old file again: run clean again");
    return true;
}

// Rolls the interrupted commits of `modelPath` forward; the models finished go to `report`.
// `cancel` stops the save of a model (which then stays as it was).
Status finishInterrupted(const fs::path& modelPath, const CancelToken* cancel, CleanReport& report)
{
    auto model = Model::load(modelPath);
    if (!model)
        return model.error();
    const std::vector<Interrupted> commits = interruptedCommits(**model);
    std::set<fs::path> toSave;
    for (const Interrupted& i : commits) {
        auto swapped = swapInterrupted(i, report.warnings);
        if (!swapped)
            return swapped.error();
        if (*swapped)
            toSave.insert(i.models.begin(), i.models.end());
    }
    model->reset();
    for (const fs::path& path : toSave) {
        if (std::find(report.finished.begin(), report.finished.end(), path)
            != report.finished.end())
            continue;
        auto loaded = Model::load(path);
        if (!loaded)
            return loaded.error();
        // Keeping the layout reads the temporaries as their final files (keptPlacements), which
        // are the very files now: only the model is written, naming them.
        SaveOptions keep;
        keep.keepPlacement = true;
        keep.lockWaitMs = 0;
        keep.cancel = cancel;
        auto saved = save(**loaded, path, keep);
        if (!saved)
            return saved.error().prefixed(
                "cannot finish the interrupted save of " + path.string() + ": ");
        for (const auto& w : saved->warnings)
            report.warnings.push_back(path.filename().string() + ": " + w);
        report.finished.push_back(path);
    }
    return {};
}

// Removes `leftovers` (found under their folders' locks) and syncs their folders.
Result<std::vector<FolderEntry>> removeAll(const std::vector<FolderEntry>& leftovers)
{
    std::vector<FolderEntry> removed;
    std::set<fs::path> touched;
    for (const auto& e : leftovers) {
        if (::unlink(e.path.c_str()) != 0 && errno != ENOENT)
            return Error::io(systemMessage("cannot remove", e.path) + " (removed "
                + std::to_string(removed.size()) + " other leftover(s) before)");
        removed.push_back(e);
        touched.insert(e.path.parent_path());
    }
    for (const auto& dir : touched)
        if (Status s = fsyncDirectory(dir); !s)
            return Error::io("removed " + std::to_string(removed.size())
                + " leftover(s), but the folder may not keep the change: " + s.error().message);
    return removed;
}

} // namespace

Result<CleanReport> clean(const fs::path& path, const CancelToken* cancel)
{
    std::error_code ec;
    std::vector<fs::path> models{path};
    const bool isFolder = fs::is_directory(path, ec);
    if (isFolder) {
        auto names = modelsInFolder(path);
        if (!names)
            return names.error();
        models.clear();
        for (const auto& name : *names)
            models.push_back(path / name);
    }
    CleanReport report;
    if (isFolder && models.empty()) {
        auto removed = removeFolderLeftovers(path, report.warnings);
        if (!removed)
            return removed.error();
        report.removed = std::move(*removed);
        return report;
    }
    // In a folder, a model that does not load is named and passed over; the others are cleaned.
    auto failed = [&](const Error& e, CleanReport& report) {
        if (!isFolder)
            return true;
        report.warnings.push_back(e.message + "; passed over");
        return false;
    };
    const auto stopped = [cancel] { return cancel && cancel->isCancelled(); };
    for (const auto& model : models) {
        if (stopped())
            return cancelled("clean");
        if (Status s = finishInterrupted(model, cancel, report); !s)
            if (s.error().kind == ErrorKind::Busy || s.error().kind == ErrorKind::Cancelled
                || failed(s.error(), report))
                return s.error();
    }
    for (const auto& model : models) {
        if (stopped())
            return cancelled("clean");
        auto removed = removeLeftovers(model);
        if (!removed) {
            if (removed.error().kind == ErrorKind::Busy || failed(removed.error(), report))
                return removed.error();
            continue;
        }
        for (auto& e : *removed)
            if (std::none_of(report.removed.begin(), report.removed.end(),
                    [&](const FolderEntry& r) { return r.path == e.path; }))
                report.removed.push_back(std::move(e));
    }
    return report;
}

void removeOwnLeftovers(const Model& model, const std::set<std::string>& finals)
{
    if (auto leftovers = deadSaveLeftovers(model))
        for (const auto& e : *leftovers)
            if (finals.count(finalNameOfTemp(e.path.filename().string())))
                ::unlink(e.path.c_str());
}

Result<std::vector<FolderEntry>> removeLeftovers(const fs::path& modelPath)
{
    std::error_code ec;
    const fs::path folder = fs::absolute(modelPath, ec).lexically_normal().parent_path();
    // Locked before the model is read: a save that commits meanwhile could name temporaries
    // that the model read a moment earlier does not.
    auto lock = lockNow({folder});
    if (!lock)
        return lock.error();
    auto model = Model::load(modelPath);
    if (!model)
        return model.error();
    std::vector<fs::path> subfolders = scannedFolders(**model);
    subfolders.erase(subfolders.begin()); // the model's folder, locked above
    std::erase_if(subfolders, [&](const fs::path& dir) { return samePathOrFile(dir, folder); });
    FolderLock subLock;
    if (!subfolders.empty()) {
        auto locked = lockNow(subfolders);
        if (!locked)
            return locked.error();
        subLock = std::move(*locked);
    }

    auto leftovers = deadSaveLeftovers(**model); // every folder locked: no live save's
    if (!leftovers)
        return leftovers.error();
    return removeAll(*leftovers);
}

Result<std::vector<FolderEntry>> removeFolderLeftovers(
    const fs::path& dir, std::vector<std::string>& warnings)
{
    std::error_code ec;
    fs::path folder = fs::absolute(dir, ec).lexically_normal();
    if (folder.filename().empty()) // "out/"
        folder = folder.parent_path();
    auto lock = lockNow({folder}); // held: every temporary in it is a dead save's
    if (!lock)
        return lock.error();
    const FolderListing listing = listFolder(folder, isTempName);
    if (listing.error)
        return Error::io(folder.string() + ": cannot list the folder: " + listing.error.message());
    std::vector<FolderEntry> temps;
    for (const ListedFile& file : listing.files)
        if (isSaveTemporary(file))
            temps.push_back({file.path, file.bytes});
    std::vector<fs::path> paths;
    for (const auto& e : temps)
        paths.push_back(e.path);
    // A killed save's commit may have left a model above naming a temporary here as its data.
    const std::vector<Readers> readers = readersOf(paths, {{folder}, {}}, ReadMatch::Name);
    std::vector<FolderEntry> leftovers;
    for (size_t i = 0; i < temps.size(); ++i) {
        if (readers[i].none())
            leftovers.push_back(temps[i]);
        else
            warnings.push_back(temps[i].path.string() + " is kept: " + readers[i].describe()
                + " (onnx-repack clean MODEL finishes the save that left it)");
    }
    return removeAll(leftovers);
}

} // namespace repack
