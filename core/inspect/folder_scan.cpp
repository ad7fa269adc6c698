#include "folder_scan.h"

#include "core/file_identity.h"
#include "core/file_names.h"
#include "core/format.h"
#include "core/model/model.h"
#include "core/paths.h"
#include "core/save_lock.h"
#include "folder_listing.h"
#include "readers.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace repack {
namespace {

// stat() of `path`, symlinks followed; nullopt when it leads nowhere.
std::optional<struct stat> statOf(const fs::path& path)
{
    struct stat st { };
    if (::stat(path.c_str(), &st) != 0)
        return std::nullopt;
    return st;
}

// The folder of `model` and the subfolders of it that hold its data files.
std::vector<fs::path> foldersOf(const Model& model)
{
    const fs::path folder = model.baseDir().empty() ? fs::current_path() : model.baseDir();
    std::vector<fs::path> out{folder};
    for (const auto& path : filesReadBy(model)) {
        const fs::path parent = path.parent_path();
        const fs::path rel = parent.lexically_relative(folder);
        if (rel.empty() || rel == "." || *rel.begin() == "..")
            continue;
        std::error_code ec;
        if (!fs::is_directory(parent, ec) || fs::equivalent(parent, folder, ec))
            continue;
        if (std::find(out.begin(), out.end(), parent) == out.end())
            out.push_back(parent);
    }
    return out;
}

// scanFolder; `lockedByCaller`: the caller holds every folder's lock, so every temporary
// belongs to a dead save.
FolderReport scan(const Model& model, bool lockedByCaller)
{
    FolderReport report;
    const std::vector<fs::path> folders = foldersOf(model);
    const fs::path& folder = folders.front();
    const bool saveInFolder = !lockedByCaller && FolderLock::isHeld(folder);

    // What `model` reads comes from memory: an unsaved change counts.
    std::set<FileId> ownFiles;
    std::set<fs::path> ownNames;
    for (const auto& path : filesReadBy(model)) {
        if (auto id = fileIdOf(path))
            ownFiles.insert(*id);
        ownNames.insert(resolvedName(path));
    }
    // The candidates this model does not use: a temporary no model names, a data file no model
    // reads under any name.
    std::vector<ListedFile> temps, data;
    for (const auto& dir : folders) {
        const bool saveRunning = saveInFolder || (!lockedByCaller && FolderLock::isHeld(dir));
        FolderListing listing = listFolder(
            dir, [](const std::string& name) { return isTempName(name) || isDataName(name); });
        if (listing.error)
            report.unreadable.push_back(dir); // could not tell what is in it
        for (auto& e : listing.files) {
            if (isTempName(e.name)) {
                if (isSaveTemporary(e) && !saveRunning && !ownNames.count(resolvedName(e.path)))
                    temps.push_back(e);
            } else if (e.regular && isDataName(e.name) && !ownFiles.count(e.id)) {
                data.push_back(e);
            }
        }
    }
    // The other models that may name them: in the folder, or between it and a candidate.
    const ReaderSearch search{{folder}, {model.path()}};
    auto pathsOf = [](const std::vector<ListedFile>& entries) {
        std::vector<fs::path> out;
        for (const auto& e : entries)
            out.push_back(e.path);
        return out;
    };
    const std::vector<Readers> tempReaders = readersOf(pathsOf(temps), search, ReadMatch::Name);
    const std::vector<Readers> dataReaders = readersOf(pathsOf(data), search);
    for (const auto* readers : {&tempReaders, &dataReaders})
        for (const Readers& r : *readers)
            for (const auto& unknown : r.unknown)
                if (std::find(report.unreadable.begin(), report.unreadable.end(), unknown)
                    == report.unreadable.end())
                    report.unreadable.push_back(unknown);

    // A model that could not be read may use any of them: then nothing is a leftover or
    // unused (could not tell means keep).
    if (report.unreadable.empty()) {
        for (size_t i = 0; i < temps.size(); ++i)
            if (tempReaders[i].none())
                report.leftovers.push_back({temps[i].path, temps[i].bytes});
        for (size_t i = 0; i < data.size(); ++i)
            if (dataReaders[i].none())
                report.unusedData.push_back({data[i].path, data[i].bytes});
    }
    std::set<FileId> seen;
    for (const auto& path : filesReadBy(model)) {
        auto st = statOf(path);
        if (st && S_ISREG(st->st_mode) && st->st_nlink > 1 && seen.insert(fileIdOf(*st)).second)
            report.hardLinked.push_back({path, static_cast<uint64_t>(st->st_size)});
    }
    return report;
}

Problem warning(std::string_view code, std::string message)
{
    return {Severity::Warning, {}, std::string(code), std::move(message)};
}

std::string sized(const FolderEntry& e)
{
    return e.path.string() + " (" + formatBytes(e.bytes) + ")";
}

} // namespace

FolderReport scanFolder(const Model& model)
{
    if (model.isRemote())
        return {}; // no local folder: nothing of it is left over or unused here
    try {
        return scan(model, false);
    } catch (...) {
        return {};
    }
}

std::vector<fs::path> scannedFolders(const Model& model)
{
    return foldersOf(model);
}

Result<std::vector<FolderEntry>> deadSaveLeftovers(const Model& model)
{
    try {
        return scan(model, true).leftovers;
    } catch (const std::exception& e) {
        return Error::io("cannot scan " + model.baseDir().string() + ": " + e.what());
    }
}

std::vector<Problem> housekeepingProblems(const Model& model)
{
    const FolderReport report = scanFolder(model);
    const std::string clean
        = "onnx-repack clean " + (model.path().empty() ? "MODEL" : model.path().string());
    std::vector<Problem> out;
    for (const auto& e : report.leftovers)
        out.push_back(warning(code::LeftoverTemporary,
            sized(e) + " is left over from a save that is no longer running; " + clean
                + " removes it"));
    for (const auto& e : report.unusedData)
        out.push_back(warning(code::UnusedDataFile,
            sized(e) + " looks like a data file, but no model in this folder references it"));
    for (const auto& path : report.unreadable)
        out.push_back(warning(code::UnreadableSibling,
            path.string()
                + " could not be read, so which files of this folder are in use cannot be told: "
                  "leftovers and unused data files are not reported, and saves ask before "
                  "replacing files"));
    for (const auto& e : report.hardLinked)
        out.push_back(warning(code::HardLinkedData,
            sized(e)
                + " has other hard links: a save replaces the name; other links keep the "
                  "old bytes"));
    return out;
}

} // namespace repack
