// Where every content of a folder's graphs goes in their one shared data file (SPEC 9): each
// distinct content (dtype, shape and bytes, confirmed byte for byte) once, and what such a file
// cannot honour.
#pragma once

#include "core/plan/dedupe.h"
#include "core/plan/save_options.h"
#include "core/plan/save_plan.h"
#include "core/result.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace repack {

class Model;

// A range of the shared file and the tensor (graph, index) whose bytes it is written from.
struct SharedRange {
    size_t graph = 0;
    size_t tensor = 0;
    uint64_t offset = 0;
    uint64_t length = 0;
    std::string checksum; // of its bytes, once written (when known)
};

struct SharedLayout {
    std::vector<SharedRange> ranges; // in file order
    std::map<TensorRef, size_t> rangeOf; // every external tensor of every graph -> its range
    uint64_t bytes = 0; // the file's size
};

// Lays out the shared file for the graphs `models` with their single-file `plans` (parallel;
// each plan names the shared file, or no file): each distinct content once, in graph order
// and, within a graph, in its plan's order, aligned as `layout` says. Sets each external
// tensor's offset and each plan's file size. `progress` counts the bytes compared to confirm
// identical contents. Fails when the contents cannot be compared (a read error) or on cancel.
Result<SharedLayout> layOutShared(const std::vector<const Model*>& models,
    const std::vector<SavePlan*>& plans, const SaveOptions& layout,
    const ProgressCallback& progress = {});

// What one data file shared by every graph cannot honour, refused whatever the front end (the
// request is never quietly changed into another): another format, every tensor inline, shards,
// placements of single tensors, keeping placement, a data file name other than `sharedData`.
Status checkSharedLayout(const LayoutOptions& layout, const std::string& sharedData);

} // namespace repack
