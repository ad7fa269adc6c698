// The missing folders above a save's output (SPEC 6: a missing output folder is created), made
// before the save and taken away again when it fails, so a refused save leaves no trace.
#pragma once

#include "core/result.h"

#include <filesystem>
#include <vector>

namespace repack {

// Creates the missing folders above `file`; returns the ones it created, outermost first. Fails
// when the parent exists but is not a folder, or cannot be created.
Result<std::vector<std::filesystem::path>> createOutputFolders(const std::filesystem::path& file);

// Removes folders createOutputFolders() made, innermost first, while they are still empty.
void removeCreatedFolders(const std::vector<std::filesystem::path>& created);

} // namespace repack
