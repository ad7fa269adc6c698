// Finishing what dead saves left: the one place in core, besides a save's own steps, that
// deletes files. Inspecting a folder (core/inspect/folder_scan.h) only lists them.
#pragma once

#include "core/inspect/folder_scan.h"
#include "core/progress.h"
#include "core/result.h"

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace repack {

class Model;

// What `clean` did.
struct CleanReport {
    // Models a save killed after its commit left naming its data by temporary names, now naming
    // the final files (the interrupted commit rolled forward).
    std::vector<std::filesystem::path> finished;
    std::vector<FolderEntry> removed; // leftovers of dead saves
    // What could not be finished, and why (a data file's final name another model reads).
    std::vector<std::string> warnings;
};

// `onnx-repack clean PATH`, for a model or a folder (each model in it). First every commit a
// killed save left half done is rolled forward (SPEC 5a): each save temporary Ti that the models
// name becomes its final file Di (linked over it, when Di is not Ti already and no other model
// reads Di), and each model naming Ti is saved keeping its layout, which writes only the model
// (core/plan: keptDataFiles): no data file a model reads then has a second link. A final name
// that another model reads, or that is no data file (a model, a symlink), is not replaced: the
// temporary keeps its name (one link, which every reader accepts) and a warning says why. Then,
// under the folder's lock, the leftovers of dead saves are removed (never a temporary some model
// there references) and the folder synced. Fails, without removing any leftover, when a save
// holds a lock ("another save is running in ...") or the model does not load; a commit already
// rolled forward by then stays so (each step leaves a complete state). A folder that holds no
// model (the output of a save that never committed) has its leftovers removed all the same:
// removeFolderLeftovers. `cancel` stops it between steps (ErrorKind::Cancelled), what was done by
// then done.
Result<CleanReport> clean(const std::filesystem::path& path, const CancelToken* cancel = nullptr);

// The leftovers step of clean() for the folder `dir` itself, whatever it holds: under its lock
// (so no live save owns a temporary in it), each regular file named as a save's temporary
// (tempNameFor: never a name the tool does not make, never a symlink) that no model names, in
// `dir` or a folder above it (a model reads files at or below its own folder only). A temporary
// some model there may name but that could not be read to tell is kept, with a warning.
Result<std::vector<FolderEntry>> removeFolderLeftovers(
    const std::filesystem::path& dir, std::vector<std::string>& warnings);

// The leftovers step of clean() for one model: returns what it removed.
Result<std::vector<FolderEntry>> removeLeftovers(const std::filesystem::path& modelPath);

// For a save: the temporaries of earlier, dead saves of these final files (names) that no
// model in the folder names, also those that are only another link to a final file (a save
// killed after the swap). Only called under the folders' lock with `model` describing what is
// on disk, so no live save owns them; a temporary that cannot be removed stays for `clean`.
void removeOwnLeftovers(const Model& model, const std::set<std::string>& finals);

} // namespace repack
