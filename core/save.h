// Crash-safe save (SPEC section 5, protocol in docs/save-protocol.md): new data is streamed
// into temporary files beside the target, synced, and swapped in so that at every instant the
// model path opens as the complete old or the complete new model, for any reader.
#pragma once

#include "result.h"
#include "save_options.h"
#include "save_plan.h"

#include <filesystem>
#include <vector>

namespace repack {

class Model;

struct SaveReport {
    std::filesystem::path modelPath;
    std::vector<std::filesystem::path> dataFiles; // written, in shard order
    uint64_t bytesWritten = 0; // model file plus data files
    size_t externalTensors = 0;
    size_t inlineTensors = 0;
    double seconds = 0;
};

// Saves `model` to `path` (which may be its own path) and updates it to the saved layout:
// external tensors point at the new files and offsets, handles into replaced files are
// invalidated. On failure or cancellation nothing on disk changed and `model` is as before.
Result<SaveReport> save(
    Model& model, const std::filesystem::path& path, const SaveOptions& options);

// Existing files a save would overwrite that `model` does not reference itself: the caller
// must ask before saving with options.force.
std::vector<std::filesystem::path> unreferencedTargets(
    const Model& model, const std::filesystem::path& path, const SaveOptions& options);

} // namespace repack
