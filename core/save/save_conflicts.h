// What a save must not write over without asking, and where it writes: the checks save() runs
// under the folder lock before writing anything, and their public, plan-it-yourself forms for
// a front end that asks first (the GUI, the Python package).
#pragma once

#include "core/plan/save_options.h"
#include "core/result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace repack {

class Model;
struct SavePlan;

// The folders a save of `plan` to `path` writes into, each locked for the save (SPEC 5a): the
// model's folder, then each data file's, in plan order (repeats kept; FolderLock folds them).
// The one list for save() and for a caller told "busy" that asks which folder is held.
std::vector<std::filesystem::path> saveFolders(
    const std::filesystem::path& path, const SavePlan& plan);

// An existing file that a save would replace and that is not only this model's own: another
// model reads it (found by readersOf from any folder that could name it: a sibling, or the source
// model when saving elsewhere), or no model uses it. Replacing it needs consent (options.force)
// that names `users`.
struct SaveConflict {
    std::filesystem::path file;
    std::vector<std::filesystem::path> users; // models that would read wrong bytes; may be empty
    std::string message; // one line naming the file and its users
};

// The conflicts of saving `model` to `path`; empty when the save may go ahead without consent.
// Fails on names that alias (a data file equal to the input or output model, a folder, another
// output of the same save): those are refused whatever the consent.
Result<std::vector<SaveConflict>> saveConflicts(
    const Model& model, const std::filesystem::path& path, const SaveOptions& options);
// The same for a plan already made by planSave(model, path, options), where planning again
// would cost what the plan did (a preview that has it).
Result<std::vector<SaveConflict>> saveConflicts(const Model& model,
    const std::filesystem::path& path, const SavePlan& plan, const SaveOptions& options);

// A model file a save reads or writes, and what to call it in a message ("the input model").
struct ModelFileRole {
    std::filesystem::path path;
    std::string role;
};

// Refuses data files that alias, whatever the consent: a folder (also through a symlink), one of
// `models` (also through a symlink or a hard link), a file this save already writes (also
// through another name). `names` are as the user gave them (for the message), `paths` where
// they lead, parallel. Kind Usage: a name to change, not a save to retry.
Status checkDataAliases(const std::vector<std::string>& names,
    const std::vector<std::filesystem::path>& paths, const std::vector<ModelFileRole>& models);

// checkDataAliases for the save of `model` to `out`: the output and the input model files.
Status checkAliases(const Model& model, const std::filesystem::path& out, const SavePlan& plan);

// The existing files the save of `model` to `out` would replace that need consent; the `kept`
// data files (parallel to plan.files, keptDataFiles) are not replaced.
std::vector<SaveConflict> conflictsOf(const Model& model, const std::filesystem::path& out,
    const SavePlan& plan, const std::vector<bool>& kept = {});

} // namespace repack
