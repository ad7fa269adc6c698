// Which existing files a save would replace, and who else reads them (SPEC 5, 5a): names that
// alias are refused outright; files other models read, or no model reads, need consent.
#include "save_conflicts.h"

#include "core/file_identity.h"
#include "core/file_names.h"
#include "core/inspect/readers.h"
#include "core/model/model.h"
#include "core/plan/save_plan.h"

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

Status checkDataAliases(const std::vector<std::string>& names, const std::vector<fs::path>& paths,
    const std::vector<ModelFileRole>& models)
{
    // Names that can never work for this save: fix them, do not retry (kind Usage).
    auto usage = [](std::string message) { return Error{std::move(message), ErrorKind::Usage}; };
    std::vector<fs::path> seen;
    for (size_t i = 0; i < names.size(); ++i) {
        const std::string& name = names[i];
        const fs::path target = paths[i].lexically_normal();
        std::error_code ec;
        if (fs::is_directory(target, ec) || target.filename().empty() || target.filename() == "."
            || target.filename() == "..")
            return usage("data file '" + name + "' names a folder, not a file");
        for (const auto& m : models)
            if (!m.path.empty() && samePathOrFile(target, m.path))
                return usage("data file '" + name + "' is " + m.role + " " + m.path.string()
                    + "; choose another data file name");
        for (const auto& earlier : seen) {
            if (earlier == target)
                return usage("data file '" + name + "' is written twice by this save");
            if (samePathOrFile(earlier, target))
                return usage("data file '" + name + "' is another name of " + earlier.string()
                    + ", which this save also writes");
        }
        seen.push_back(target);
    }
    return {};
}

Status checkAliases(const Model& model, const fs::path& out, const SavePlan& plan)
{
    std::vector<fs::path> paths;
    for (const auto& name : plan.files)
        paths.push_back(out.parent_path() / name);
    return checkDataAliases(
        plan.files, paths, {{out, "the model file"}, {model.path(), "the input model"}});
}

std::vector<SaveConflict> conflictsOf(
    const Model& model, const fs::path& out, const SavePlan& plan, const std::vector<bool>& kept)
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
    for (size_t f = 0; f < plan.files.size(); ++f)
        if (f >= kept.size() || !kept[f])
            replaced.push_back((out.parent_path() / plan.files[f]).lexically_normal());
    // Every folder a model could read them from: theirs and those above, up to the output
    // folder and the source model's.
    ReaderSearch search{{out.parent_path()}, {out}};
    if (!model.path().empty()) {
        search.roots.push_back(model.path().parent_path());
        search.exclude.push_back(model.path());
    }
    const std::vector<Readers> readers = readersOf(replaced, search);

    std::vector<SaveConflict> conflicts;
    for (size_t i = 0; i < replaced.size(); ++i) {
        const fs::path& file = replaced[i];
        const auto id = fileIdOf(file);
        if (!id)
            continue; // nothing there (or a dangling link, which holds no bytes)
        SaveConflict conflict{file, {}, {}};
        if (sourceReads.count(*id))
            conflict.users.push_back(model.path());
        conflict.users.insert(
            conflict.users.end(), readers[i].models.begin(), readers[i].models.end());
        const bool isModelFile = i == 0;
        // A model file is read as a model: only a known reader of it as data counts, or every
        // save beside an unreadable .onnx would need consent.
        std::vector<fs::path> unknown = isModelFile ? std::vector<fs::path>{} : readers[i].unknown;
        if (conflict.users.empty() && unknown.empty() && (isModelFile || own.count(*id)))
            continue; // replacing an output model nobody reads, or this model's own data
        conflict.message = file.string()
            + (!conflict.users.empty() ? " is read by " + names(conflict.users)
                        + ", which would read wrong bytes after this save"
                    : unknown.empty() ? " already exists and no model uses it"
                                      : std::string(" exists"))
            + (unknown.empty() ? std::string()
                               : (conflict.users.empty() ? "; " : "; also, ") + names(unknown)
                        + " could not be read to tell whether it uses it")
            + "; replacing it needs explicit consent (--force)";
        conflict.users.insert(conflict.users.end(), unknown.begin(), unknown.end());
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
    return saveConflicts(model, out, *plan, options);
}

Result<std::vector<SaveConflict>> saveConflicts(
    const Model& model, const fs::path& path, const SavePlan& plan, const SaveOptions& options)
{
    const fs::path out = fs::absolute(path).lexically_normal();
    if (Status s = checkAliases(model, out, plan); !s)
        return s.error();
    return conflictsOf(model, out, plan,
        options.rewrite ? std::vector<bool>{} : keptDataFiles(model, out, plan, options));
}

} // namespace repack
