// Which existing files a save would replace, and who else reads them (SPEC 5, 5a): names that
// alias are refused outright; files other models read, or no model reads, need consent.
#include "save_conflicts.h"

#include "folder_scan.h"
#include "model.h"
#include "save_steps.h"

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

// Files the model may replace without asking: those it reads, when it is saved over itself,
// and the final names of temporaries it reads (a model left by an interrupted save).
std::set<FileId> ownFiles(const Model& model, bool inPlace)
{
    std::set<FileId> own;
    if (!inPlace)
        return own;
    for (const auto& path : filesReadBy(model)) {
        if (auto id = fileId(path))
            own.insert(*id);
        const std::string final = finalNameOfTemp(path.filename().string());
        if (!final.empty())
            if (auto id = fileId(path.parent_path() / final))
                own.insert(*id);
    }
    return own;
}

} // namespace

Status checkAliases(const Model& model, const fs::path& out, const SavePlan& plan)
{
    std::set<fs::path> seen{out};
    for (const auto& name : plan.files) {
        const fs::path target = (out.parent_path() / name).lexically_normal();
        std::error_code ec;
        if (fs::is_directory(target, ec) || target.filename().empty() || target.filename() == "."
            || target.filename() == "..")
            return Error{"data file '" + name + "' names a folder, not a file"};
        if (sameFile(target, out))
            return Error{"data file '" + name + "' is the model file " + out.string()
                + " itself; choose another data file name"};
        if (!model.path().empty() && sameFile(target, model.path()))
            return Error{"data file '" + name + "' is the input model " + model.path().string()
                + "; choose another data file name"};
        if (!seen.insert(target).second)
            return Error{"data file '" + name + "' is written twice by this save"};
        for (const auto& earlier : seen)
            if (earlier != target && sameFile(earlier, target))
                return Error{"data file '" + name + "' is another name of " + earlier.string()
                    + ", which this save also writes"};
    }
    return {};
}

std::vector<SaveConflict> conflictsOf(const Model& model, const fs::path& out, const SavePlan& plan)
{
    const bool inPlace = !model.path().empty() && sameFile(out, model.path());
    const std::set<FileId> own = ownFiles(model, inPlace);
    std::set<FileId> sourceReads; // files the model being saved reads (saving elsewhere)
    if (!inPlace)
        for (const auto& path : filesReadBy(model))
            if (auto id = fileId(path))
                sourceReads.insert(*id);

    std::vector<fs::path> replaced{out};
    for (const auto& name : plan.files)
        replaced.push_back((out.parent_path() / name).lexically_normal());
    std::vector<fs::path> exclude{out};
    if (!model.path().empty())
        exclude.push_back(model.path());

    std::vector<SaveConflict> conflicts;
    for (size_t i = 0; i < replaced.size(); ++i) {
        const fs::path& file = replaced[i];
        const auto id = fileId(file);
        if (!id)
            continue; // nothing there (or a dangling link, which holds no bytes)
        SaveConflict conflict{file, {}, {}};
        if (sourceReads.count(*id))
            conflict.users.push_back(model.path());
        std::set<fs::path> folders{file.parent_path(), out.parent_path()};
        for (const auto& folder : folders)
            for (auto& user : modelsReferencing(folder, file, exclude))
                conflict.users.push_back(std::move(user));
        const bool isModelFile = i == 0;
        if (conflict.users.empty() && (isModelFile || own.count(*id)))
            continue; // replacing an output model nobody reads, or this model's own data
        conflict.message = file.string()
            + (conflict.users.empty() ? " already exists and no model in its folder uses it"
                                      : " is read by " + names(conflict.users)
                        + ", which would read wrong bytes after this save")
            + "; replacing it needs explicit consent (--force)";
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
        return Error{out.string() + ": " + plan.error().message};
    if (Status s = checkAliases(model, out, *plan); !s)
        return s.error();
    return conflictsOf(model, out, *plan);
}

} // namespace repack
