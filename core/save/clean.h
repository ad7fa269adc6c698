// Removing what dead saves left behind: the one place in core, besides a save's own steps,
// that deletes files. Inspecting a folder (core/inspect/folder_scan.h) only lists them.
#pragma once

#include "core/inspect/folder_scan.h"
#include "core/result.h"

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace repack {

class Model;

// `onnx-repack clean`: under the folder's lock, removes the leftovers of dead saves in the
// folder of `modelPath` (never a temporary some model there references) and syncs the folder.
// Returns what it removed; fails without removing anything when a save holds the lock
// ("another save is running in ...") or the model does not load.
Result<std::vector<FolderEntry>> removeLeftovers(const std::filesystem::path& modelPath);

// For a save: the temporaries of earlier, dead saves of these final files (names) that no
// model in the folder names, also those that are only another link to a final file (a save
// killed after the swap). Only called under the folders' lock with `model` describing what is
// on disk, so no live save owns them; a temporary that cannot be removed stays for `clean`.
void removeOwnLeftovers(const Model& model, const std::set<std::string>& finals);

} // namespace repack
