// The steps save() and the external-data operations share: writing a plan's data files into
// temporaries beside their destinations, and swapping them in atomically.
#pragma once

#include "result.h"
#include "save_plan.h"
#include "temp_file.h"

#include <filesystem>
#include <optional>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace repack {

class DataWriter;
class Model;

// Device and inode of the file `path` names (following symlinks), if it exists.
using FileId = std::pair<dev_t, ino_t>;
std::optional<FileId> fileId(const std::filesystem::path& path);

struct DataTarget {
    std::filesystem::path finalPath; // what the model names: folder / data file name
    std::filesystem::path realPath; // where the bytes go: a symlink's target, else finalPath
    TempFile temp; // the new bytes, synced and closed
};

// Writes every data file of `plan` (names relative to `dir`) into a temporary beside it;
// each temporary is registered with `cleanup`.
Result<std::vector<DataTarget>> writeDataTemps(const SavePlan& plan,
    const std::filesystem::path& dir, DataWriter& writer, TempCleanup& cleanup);

// Makes `target.finalPath` hold the new bytes with one atomic rename. With `keepTemp` the
// temporary stays valid under its own name too (a hard link is renamed, not the temporary).
Status swapIn(const DataTarget& target, bool keepTemp);

Status renameSynced(const std::filesystem::path& from, const std::filesystem::path& to);

// The paths through which `model` reads files that the targets are about to replace.
std::vector<std::filesystem::path> readsReplacedBy(
    const Model& model, const std::vector<DataTarget>& targets);

} // namespace repack
