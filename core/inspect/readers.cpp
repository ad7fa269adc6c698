#include "readers.h"

#include "folder_listing.h"

#include "core/file_identity.h"
#include "core/file_names.h"
#include "core/model/model.h"
#include "core/paths.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace repack {
namespace {

// What one model reads, from the locations of its external tensors. `known` false: it could not
// be read now, so it may read anything.
struct ModelReads {
    bool known = false;
    std::set<FileId> files;
    std::set<fs::path> names;
};

ModelReads readsOf(const fs::path& model)
{
    ModelReads out;
    try {
        auto paths = externalDataPaths(model); // a walk that skips payloads: no weight is read
        if (!paths) {
            // Bytes that are no ONNX model read nothing: every reader refuses them too. A model
            // that vanished meanwhile reads nothing either.
            const ErrorKind kind = paths.error().kind;
            out.known = kind == ErrorKind::Format || kind == ErrorKind::Corrupt
                || kind == ErrorKind::NotFound;
            return out;
        }
        for (const fs::path& p : *paths) {
            if (auto id = fileIdOf(p))
                out.files.insert(*id);
            out.names.insert(resolvedName(p));
        }
        out.known = true;
    } catch (...) {
        out.known = false; // out of memory, say: could not tell
    }
    return out;
}

// A model of a searched folder: its path and file.
struct FolderModel {
    fs::path path;
    FileId id;
};

// The models directly in `dir` (isFolderModel), symlinks followed. nullopt when the folder
// exists but cannot be listed: who in it reads what cannot be told.
std::optional<std::vector<FolderModel>> modelsIn(const fs::path& dir)
{
    const FolderListing listing = listFolder(dir, isModelName);
    if (listing.error)
        return std::nullopt;
    std::vector<FolderModel> out;
    for (const ListedFile& file : listing.files)
        if (isFolderModel(file.name, file.regular))
            out.push_back({file.path, file.id});
    return out;
}

} // namespace

std::vector<fs::path> filesReadBy(const Model& model)
{
    if (model.isRemote()) // its files are on a server: none of them is on this disk
        return {};
    std::set<fs::path> read;
    const fs::path* last = nullptr; // tensors of one file share one path object
    for (const auto& t : model.tensors()) {
        if (!t.isExternal())
            continue;
        if (!t.external->resolvedPath().empty()) {
            if (&t.external->resolvedPath() != last)
                read.insert(*(last = &t.external->resolvedPath()));
        } else if (!t.external->location().empty()
            && fs::path(t.external->location()).is_relative())
            read.insert((model.baseDir() / t.external->location()).lexically_normal());
    }
    return {read.begin(), read.end()};
}

std::vector<fs::path> Readers::all() const
{
    std::vector<fs::path> out = models;
    out.insert(out.end(), unknown.begin(), unknown.end());
    return out;
}

std::string Readers::describe() const
{
    std::string out;
    auto add = [&out](const std::string& clause) { out += (out.empty() ? "" : "; ") + clause; };
    for (const auto& m : models)
        add(m.filename().string() + " reads it");
    for (const auto& u : unknown) {
        std::error_code ec;
        add(fs::is_directory(u, ec)
                ? u.string() + " could not be listed to tell which models in it use it"
                : u.filename().string() + " could not be read to tell whether it uses it");
    }
    return out;
}

std::vector<fs::path> readerFolders(const fs::path& file, const ReaderSearch& search)
{
    std::vector<fs::path> out;
    auto add = [&out](const fs::path& dir) {
        if (std::find(out.begin(), out.end(), dir) == out.end())
            out.push_back(dir);
    };
    // The file's folder and every one above it: a model in any of them may name it.
    for (fs::path dir = normalFolder(file).parent_path();; dir = dir.parent_path()) {
        add(dir);
        if (dir == dir.root_path() || dir.empty())
            break;
    }
    for (const auto& r : search.roots)
        add(normalFolder(r));
    return out;
}

std::vector<Readers> readersOf(
    const std::vector<fs::path>& files, const ReaderSearch& search, ReadMatch match)
{
    std::vector<Readers> out(files.size());
    try {
        // By path only: another name of a model being saved (a hard link) keeps the old model
        // once the save renames a new one over this name, and reads what it read before.
        std::set<fs::path> excludedPaths;
        for (const auto& x : search.exclude)
            if (!x.empty())
                excludedPaths.insert(normalFolder(x));
        std::vector<std::optional<FileId>> ids(files.size());
        std::vector<fs::path> names(files.size());
        std::map<fs::path, std::vector<size_t>> byFolder; // each folder listed once for all
        for (size_t i = 0; i < files.size(); ++i) {
            ids[i] = fileIdOf(files[i]);
            if (!ids[i])
                continue; // nothing there (or a dangling link, which holds no bytes)
            names[i] = resolvedName(normalFolder(files[i]));
            for (const auto& dir : readerFolders(files[i], search))
                byFolder[dir].push_back(i);
        }
        std::map<FileId, ModelReads> reads; // each model read once, whatever its names
        std::vector<fs::path> roots;
        for (const auto& r : search.roots)
            roots.push_back(normalFolder(r));
        for (const auto& [dir, indices] : byFolder) {
            const auto models = modelsIn(dir);
            if (!models) {
                // A folder that cannot be listed may hold readers. One above every root (the
                // user's home seen through a -x parent, say) is passed over: the user keeps no
                // models there that this tool could read either.
                const fs::path& folder = dir; // clang 14 captures no structured binding
                if (std::any_of(roots.begin(), roots.end(),
                        [&folder](const fs::path& r) { return isUnder(folder, r); }))
                    for (size_t i : indices)
                        out[i].unknown.push_back(dir);
                continue;
            }
            for (const FolderModel& m : *models) {
                if (excludedPaths.count(m.path))
                    continue;
                auto it = reads.find(m.id);
                if (it == reads.end())
                    it = reads.emplace(m.id, readsOf(m.path)).first;
                const ModelReads& r = it->second;
                for (size_t i : indices) {
                    if (!r.known)
                        out[i].unknown.push_back(m.path);
                    else if (match == ReadMatch::Identity ? r.files.count(*ids[i]) > 0
                                                          : r.names.count(names[i]) > 0)
                        out[i].models.push_back(m.path);
                }
            }
        }
    } catch (const std::exception&) {
        // Could not tell: each file's own folder stands for its unknown readers.
        for (size_t i = 0; i < files.size(); ++i)
            out[i].unknown.push_back(normalFolder(files[i]).parent_path());
    }
    for (Readers& r : out)
        for (auto* list : {&r.models, &r.unknown}) {
            std::sort(list->begin(), list->end());
            list->erase(std::unique(list->begin(), list->end()), list->end());
        }
    return out;
}

Readers readersOf(const fs::path& file, const ReaderSearch& search, ReadMatch match)
{
    return std::move(readersOf(std::vector<fs::path>{file}, search, match).front());
}

} // namespace repack
