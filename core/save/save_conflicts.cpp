// Which existing files a save would replace, and who else reads them (SPEC 5, 5a): names that
// alias are refused outright; files other models read, or no model reads, need consent.
#include "save_conflicts.h"

#include "core/inspect/folder_scan.h"
#include "core/model/model.h"
#include "save_steps.h"

#include <map>
#include <set>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace repack {
namespace {

std::string names(const std::vector<fs::path>& paths)
{
    std::string out;
    for (const auto& p : paths)
        out += (out.empty() ? "" : ", ") + p.filename().string();
    return out;
}

// Files the model may replace without asking: those it reads, when it is saved over itself
// or has no file of its own (a proto, whose data is its own once no other model reads it), and
// the final names of temporaries it reads (a model left by an interrupted save).
std::set<FileId> ownFiles(const Model& model, bool inPlace)
{
    std::set<FileId> own;
    if (!inPlace && !model.path().empty())
        return own;
    for (const auto& path : filesReadBy(model)) {
        if (auto id = fileIdOf(path))
            own.insert(*id);
        const std::string final = finalNameOfTemp(path.filename().string());
        if (!final.empty())
            if (auto id = fileIdOf(path.parent_path() / final))
                own.insert(*id);
    }
    return own;
}

} // namespace

std::vector<fs::path> saveFolders(const fs::path& out, const SavePlan& plan)
{
    const fs::path dir = fs::absolute(out).lexically_normal().parent_path();
    std::vector<fs::path> folders{dir};
    for (const auto& name : plan.files)
        folders.push_back((dir / name).lexically_normal().parent_path());
    return folders;
}

Status checkAliases(const Model& model, const fs::path& out, const SavePlan& plan)
{
    // Names that can never work for this save: fix them, do not retry (kind Usage).
    auto usage = [](std::string message) { return Error{std::move(message), ErrorKind::Usage}; };
    std::set<fs::path> seen{out};
    for (const auto& name : plan.files) {
        const fs::path target = (out.parent_path() / name).lexically_normal();
        std::error_code ec;
        if (fs::is_directory(target, ec) || target.filename().empty() || target.filename() == "."
            || target.filename() == "..")
            return usage("data file '" + name + "' names a folder, not a file");
        if (samePathOrFile(target, out))
            return usage("data file '" + name + "' is the model file " + out.string()
                + " itself; choose another data file name");
        if (!model.path().empty() && samePathOrFile(target, model.path()))
            return usage("data file '" + name + "' is the input model " + model.path().string()
                + "; choose another data file name");
        if (!seen.insert(target).second)
            return usage("data file '" + name + "' is written twice by this save");
        for (const auto& earlier : seen)
            if (earlier != target && samePathOrFile(earlier, target))
                return usage("data file '" + name + "' is another name of " + earlier.string()
                    + ", which this save also writes");
    }
    return {};
}

std::vector<SaveConflict> conflictsOf(const Model& model, const fs::path& out, const SavePlan& plan)
{
    const bool inPlace = !model.path().empty() && samePathOrFile(out, model.path());
    const std::set<FileId> own = ownFiles(model, inPlace);
    // Files the model being saved reads from its own file, when saving elsewhere: that file
    // would then read wrong bytes. A model without a file (a proto) is no such reader.
    std::set<FileId> sourceReads;
    if (!inPlace && !model.path().empty())
        for (const auto& path : filesReadBy(model))
            if (auto id = fileIdOf(path))
                sourceReads.insert(*id);

    std::vector<fs::path> replaced{out};
    for (const auto& name : plan.files)
        replaced.push_back((out.parent_path() / name).lexically_normal());
    std::vector<fs::path> exclude{out};
    if (!model.path().empty())
        exclude.push_back(model.path());

    // Each folder's models are read once for all the files replaced (a file is looked up in
    // its own folder and in the output model's).
    std::map<fs::path, std::vector<size_t>> byFolder;
    for (size_t i = 0; i < replaced.size(); ++i)
        if (fileIdOf(replaced[i]))
            for (const fs::path& folder :
                std::set<fs::path>{replaced[i].parent_path(), out.parent_path()})
                byFolder[folder].push_back(i);
    std::vector<std::vector<fs::path>> users(replaced.size());
    std::vector<std::vector<fs::path>> unknown(replaced.size()); // could not tell: they may
    for (const auto& [folder, indices] : byFolder) {
        std::vector<fs::path> files;
        for (size_t i : indices)
            files.push_back(replaced[i]);
        FolderReaders readers = modelsReading(folder, files, exclude);
        for (size_t k = 0; k < indices.size(); ++k) {
            auto& u = users[indices[k]];
            u.insert(u.end(), readers.users[k].begin(), readers.users[k].end());
            auto& n = unknown[indices[k]];
            n.insert(n.end(), readers.unreadable.begin(), readers.unreadable.end());
            if (!readers.failure.empty())
                n.push_back(folder);
        }
    }

    std::vector<SaveConflict> conflicts;
    for (size_t i = 0; i < replaced.size(); ++i) {
        const fs::path& file = replaced[i];
        const auto id = fileIdOf(file);
        if (!id)
            continue; // nothing there (or a dangling link, which holds no bytes)
        SaveConflict conflict{file, {}, {}};
        if (sourceReads.count(*id))
            conflict.users.push_back(model.path());
        conflict.users.insert(conflict.users.end(), users[i].begin(), users[i].end());
        const bool isModelFile = i == 0;
        // A model file is read as a model: only a known reader of it as data counts, or every
        // save beside an unreadable .onnx would need consent.
        if (isModelFile)
            unknown[i].clear();
        if (conflict.users.empty() && unknown[i].empty() && (isModelFile || own.count(*id)))
            continue; // replacing an output model nobody reads, or this model's own data
        conflict.message = file.string()
            + (!conflict.users.empty() ? " is read by " + names(conflict.users)
                        + ", which would read wrong bytes after this save"
                    : unknown[i].empty() ? " already exists and no model in its folder uses it"
                                         : std::string(" exists"))
            + (unknown[i].empty() ? std::string()
                                  : (conflict.users.empty() ? "; " : "; also, ") + names(unknown[i])
                        + " could not be read to tell whether it uses it")
            + "; replacing it needs explicit consent (--force)";
        conflict.users.insert(conflict.users.end(), unknown[i].begin(), unknown[i].end());
        conflicts.push_back(std::move(conflict));
    }
    return conflicts;
}

Result<std::vector<SaveConflict>> saveConflicts(
    const Model& model, const fs::path& path, const SaveOptions& options)
{
    const fs::path out = fs::absolute(path).lexically_normal();
    auto plan = planSave(model, out, options);
    if (!plan)
        return Error{out.string() + ": " + plan.error().message, plan.error().kind};
    if (Status s = checkAliases(model, out, *plan); !s)
        return s.error();
    return conflictsOf(model, out, *plan);
}

} // namespace repack
