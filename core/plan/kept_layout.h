// Keeping placement made explicit, for planSave (internal to core/plan). The public side of
// what a save keeps (keptPlacements, planKeepsLayout, keptDataFiles) is in save_plan.h.
#pragma once

#include "core/result.h"
#include "save_options.h"

#include <filesystem>

namespace repack {

class Model;

// SaveOptions::keepPlacement made explicit: every tensor's place as placements, and the
// desktop app's pins over them.
Result<SaveOptions> keptOptions(
    const Model& model, const std::filesystem::path& modelPath, const SaveOptions& requested);

} // namespace repack
