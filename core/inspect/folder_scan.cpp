#include "folder_scan.h"

#include "core/file_identity.h"
#include "core/file_names.h"
#include "core/format.h"
#include "core/model/model.h"
#include "core/paths.h"
#include "core/posix_file.h"
#include "core/save_lock.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

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

// One name in a scanned folder.
struct Entry {
    fs::path path;
    std::string name;
    bool symlink = false; // the name itself is a symlink
    bool regular = false; // it leads to a regular file
    FileId id;
    uint64_t bytes = 0;
};

// The names in `dir`; `listed` false when the folder could not be listed (a -wx folder): then
// nothing can be told about who in it reads what.
std::vector<Entry> listFolder(const fs::path& dir, bool* listed = nullptr)
{
    std::vector<Entry> out;
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (listed)
        *listed = !ec || ec == std::errc::no_such_file_or_directory;
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        Entry e;
        e.path = it->path();
        e.name = e.path.filename().string();
        struct stat lst { };
        if (::lstat(e.path.c_str(), &lst) != 0)
            continue;
        e.symlink = S_ISLNK(lst.st_mode);
        auto st = statOf(e.path);
        if (!st)
            continue; // a dangling link
        e.regular = S_ISREG(st->st_mode);
        e.id = fileIdOf(*st);
        e.bytes = static_cast<uint64_t>(st->st_size);
        out.push_back(std::move(e));
    }
    std::sort(
        out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    return out;
}

// Whether the bytes of `path` contain one of `needles`: a model that names a file holds its
// location as plain bytes. Read in chunks (a file truncated meanwhile cannot fault as a mapping
// could). A file that cannot be read could name anything: Unknown, never No.
enum class Mention { No, Yes, Unknown };

Mention mentionsAny(const fs::path& path, const std::vector<std::string>& needles)
{
    size_t longest = 0;
    for (const auto& n : needles)
        longest = std::max(longest, n.size());
    if (longest == 0)
        return Mention::No;
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid())
        return errno == ENOENT ? Mention::No : Mention::Unknown; // a vanished file reads nothing
    (void)::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    constexpr size_t kChunk = 1u << 20;
    AlignedBuffer buffer(kChunk + longest);
    char* data = reinterpret_cast<char*>(buffer.data());
    size_t carry = 0; // the tail of the previous chunk, so a needle may straddle two chunks
    for (;;) {
        const ssize_t got = ::read(fd.get(), data + carry, kChunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return Mention::Unknown;
        if (got == 0)
            return Mention::No;
        const size_t filled = carry + static_cast<size_t>(got);
        for (const auto& n : needles)
            if (!n.empty() && ::memmem(data, filled, n.data(), n.size()))
                return Mention::Yes;
        carry = std::min(filled, longest - 1);
        std::memmove(data, data + filled - carry, carry);
    }
}

// What the models of a folder read: the files (by inode) and the names (symlinks resolved).
struct References {
    std::set<FileId> files;
    std::set<fs::path> names;
};

// The paths `model`'s external tensors read, once each. A reference that failed validation
// still counts where its path is known: better a file kept than one removed under a reader.
std::set<fs::path> externalPaths(const Model& model)
{
    std::set<fs::path> out;
    for (const auto& t : model.tensors()) {
        if (!t.isExternal())
            continue;
        if (!t.external->resolvedPath.empty())
            out.insert(t.external->resolvedPath);
        else if (!t.external->location.empty() && fs::path(t.external->location).is_relative())
            out.insert((model.baseDir() / t.external->location).lexically_normal());
    }
    return out;
}

void addReferences(const Model& model, References& refs)
{
    for (const auto& path : externalPaths(model)) {
        if (auto id = fileIdOf(path))
            refs.files.insert(*id);
        refs.names.insert(resolvedName(path));
    }
}

// Adds what the model at `path` (whose bytes were just read) reads, from its external
// locations alone (no index: a sibling of 100,000 tensors costs a walk, not an index of it):
// bytes that are no ONNX model read nothing, as every reader refuses them too. False when it
// cannot be told (the file cannot be read now, or changed while it was: out of memory, say).
bool addReferencesOf(const fs::path& path, References& refs)
{
    try {
        auto paths = externalDataPaths(path);
        if (!paths)
            return paths.error().kind == ErrorKind::Corrupt;
        for (const fs::path& p : *paths) {
            if (auto id = fileIdOf(p))
                refs.files.insert(*id);
            refs.names.insert(resolvedName(p));
        }
        return true;
    } catch (...) {
        return false; // never let one broken sibling stop a scan
    }
}

// The folder of `model` and the subfolders of it that hold its data files.
std::vector<fs::path> foldersOf(const Model& model)
{
    const fs::path folder = model.baseDir().empty() ? fs::current_path() : model.baseDir();
    std::vector<fs::path> out{folder};
    for (const auto& path : externalPaths(model)) {
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
    const auto self = model.path().empty() ? std::nullopt : fileIdOf(model.path());

    std::vector<Entry> temps, data, symlinks;
    std::vector<fs::path> siblings;
    for (const auto& dir : folders) {
        const bool saveRunning = saveInFolder || (!lockedByCaller && FolderLock::isHeld(dir));
        bool listed = true;
        std::vector<Entry> entries = listFolder(dir, &listed);
        if (!listed)
            report.unreadable.push_back(dir); // could not tell what is in it
        for (auto& e : entries) {
            if (e.symlink)
                symlinks.push_back(e);
            if (!e.regular)
                continue;
            if (isTempName(e.name)) {
                if (!saveRunning && !e.symlink)
                    temps.push_back(e);
            } else if (isDataName(e.name)) {
                data.push_back(e);
            } else if (dir == folder && isModelName(e.name) && !(self && *self == e.id)) {
                siblings.push_back(e.path);
            }
        }
    }

    References refs;
    addReferences(model, refs);
    auto tempUsed = [&](const Entry& e) { return refs.names.count(resolvedName(e.path)) > 0; };
    auto dataUsed = [&](const Entry& e) { return refs.files.count(e.id) > 0; };
    // The names a sibling would have to mention to read a file still thought unused.
    auto needles = [&] {
        std::vector<std::string> out;
        std::set<FileId> pending;
        for (const auto& e : temps)
            if (!tempUsed(e)) {
                out.push_back(e.name);
                pending.insert(e.id);
            }
        for (const auto& e : data)
            if (!dataUsed(e)) {
                out.push_back(e.name);
                pending.insert(e.id);
            }
        for (const auto& e : symlinks)
            if (pending.count(e.id))
                out.push_back(e.name);
        return out;
    };
    for (const auto& sibling : siblings) {
        const auto names = needles();
        if (names.empty())
            break;
        const Mention mention = mentionsAny(sibling, names);
        if (mention == Mention::Unknown
            || (mention == Mention::Yes && !addReferencesOf(sibling, refs)))
            report.unreadable.push_back(sibling);
    }

    // A sibling that could not be read may use any of them: then nothing is a leftover or
    // unused (could not tell means keep).
    if (report.unreadable.empty()) {
        for (const auto& e : temps)
            if (!tempUsed(e))
                report.leftovers.push_back({e.path, e.bytes});
        for (const auto& e : data)
            if (!dataUsed(e))
                report.unusedData.push_back({e.path, e.bytes});
    }
    std::set<FileId> seen;
    for (const auto& path : externalPaths(model)) {
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

FolderReaders modelsReading(
    const fs::path& dir, const std::vector<fs::path>& files, const std::vector<fs::path>& exclude)
{
    FolderReaders out;
    out.users.resize(files.size());
    try {
        std::vector<std::optional<FileId>> targets;
        for (const auto& file : files)
            targets.push_back(fileIdOf(file));
        bool listed = true;
        const std::vector<Entry> entries = listFolder(dir, &listed);
        if (!listed) {
            out.failure
                = "cannot list " + dir.string() + " to find the models that read these files";
            return out;
        }
        // Every name in `dir` of each file (itself, symlinks, hard links) and the name it has
        // where it really lives: a model naming any of them may read it.
        std::vector<std::string> needles;
        for (size_t i = 0; i < files.size(); ++i) {
            if (!targets[i])
                continue;
            needles.push_back(files[i].filename().string());
            needles.push_back(resolvedName(files[i]).filename().string());
            for (const auto& e : entries)
                if (e.id == *targets[i])
                    needles.push_back(e.name);
        }
        std::sort(needles.begin(), needles.end());
        needles.erase(std::unique(needles.begin(), needles.end()), needles.end());
        std::erase(needles, std::string());
        if (needles.empty())
            return out;

        // Each model of the folder is read once for all the files.
        for (const auto& e : entries) {
            if (!e.regular || !isModelName(e.name))
                continue;
            if (std::any_of(exclude.begin(), exclude.end(),
                    [&](const fs::path& x) { return samePathOrFile(e.path, x); }))
                continue;
            const Mention mention = mentionsAny(e.path, needles);
            if (mention == Mention::No)
                continue;
            References refs;
            if (mention == Mention::Unknown || !addReferencesOf(e.path, refs)) {
                out.unreadable.push_back(e.path);
                continue;
            }
            for (size_t i = 0; i < files.size(); ++i)
                if (targets[i] && refs.files.count(*targets[i]))
                    out.users[i].push_back(e.path);
        }
    } catch (const std::exception& e) {
        out.failure = "cannot scan " + dir.string() + ": " + e.what();
    }
    return out;
}

std::vector<fs::path> modelsReferencing(
    const fs::path& dir, const fs::path& file, const std::vector<fs::path>& exclude)
{
    FolderReaders readers = modelsReading(dir, {file}, exclude);
    std::vector<fs::path> out = std::move(readers.users.front());
    out.insert(out.end(), readers.unreadable.begin(), readers.unreadable.end());
    if (!readers.failure.empty())
        out.push_back(dir); // could not tell: the folder itself stands for its unknown readers
    return out;
}

FolderReport scanFolder(const Model& model)
{
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
