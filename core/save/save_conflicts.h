// The checks save() runs under the folder lock before writing anything (saveConflicts in
// save.h is the public, plan-it-yourself form).
#pragma once

#include "core/result.h"
#include "save.h"

#include <filesystem>
#include <vector>

namespace repack {

// Refuses data names that alias: the output or input model file, a folder, a file this save
// already writes (also through another name).
Status checkAliases(const Model& model, const std::filesystem::path& out, const SavePlan& plan);

// The existing files the save of `model` to `out` would replace that need consent.
std::vector<SaveConflict> conflictsOf(
    const Model& model, const std::filesystem::path& out, const SavePlan& plan);

} // namespace repack
