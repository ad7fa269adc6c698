// The layout a save will produce, computed without writing: which tensors go external, into
// which file at which offset. save() writes exactly this; a GUI previews it.
#pragma once

#include "core/file_names.h"
#include "core/result.h"
#include "save_options.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace repack {

class Model;

struct PlannedTensor {
    bool external = false;
    int file = -1; // index into SavePlan::files when external
    uint64_t offset = 0; // in that file
    uint64_t length = 0;
};

struct SavePlan {
    std::vector<PlannedTensor> tensors; // parallel to Model::tensors()
    std::vector<std::string> files; // data file names relative to the model folder
    std::vector<uint64_t> fileBytes; // size of each data file, padding included
    std::vector<std::vector<size_t>> fileOrder; // tensor indices in write order, per file
    // Bytes each data file starts with, before its first tensor: the safetensors header
    // (DataFormat::Safetensors, counted in fileBytes); empty for raw data files.
    std::vector<std::string> fileHeaders;
    // What the files are laid out with (none for safetensors): what their padding is counted
    // against, and a file's padding before the save too (core/inspect/plan_diff.h).
    uint64_t alignment = 0;
    uint64_t externalBytes = 0;
    uint64_t inlineBytes = 0;
    size_t movedToExternal = 0; // inline now, external after the save
    size_t movedToInline = 0; // external now, inline after the save
    // With SaveOptions::dedupe: tensors given the range of an identical tensor, and their bytes
    // (counted in externalBytes, but stored once: fileBytes has them once).
    size_t sharedTensors = 0;
    uint64_t sharedBytes = 0;
    // What the user asked for and does not get, said as a save's warning: a tensor larger than
    // the shard size has a data file of its own, larger than that size.
    std::vector<std::string> notes;
};

// The data file a save of the model as `modelPath` writes unpinned external tensors to:
// options.dataFile, else the model's file name + the target's suffix, + ".safetensors" for
// safetensors, or + ".data".
std::string saveDataFile(const std::filesystem::path& modelPath, const SaveOptions& options);

// Bytes of data file `file` that are tensors (each shared range once).
uint64_t usedBytes(const SavePlan& plan, size_t file);

// Which data files of `plan` (parallel to plan.files) a save to `modelPath` need not write:
// the file at its final name is already, byte for byte where tensors lie, what the plan puts
// there. Every tensor planned into it reads that very file now (same device and inode, under
// any name: a save's temporary that is another link to it counts), still unchanged since it was
// validated, at the planned offset and length, with a checksum where one is asked for; the file
// is the planned size (no orphaned bytes past the end; keeping placement, a file no tensor moves
// into, out of or within may be longer: those bytes may be another model's) with a safetensors
// header as planned.
// The padding between tensors is not read (as planKeepsLayout). Such a file keeps its inode,
// its modification time and every reader of it; only the model is written.
std::vector<bool> keptDataFiles(const Model& model, const std::filesystem::path& modelPath,
    const SavePlan& plan, const SaveOptions& options);

// Whether saving `model` to `modelPath` with `plan` would write what is on disk already: the
// model's own path, every tensor where the plan puts it (inline, or the same file, offset and
// length), the data files exactly the plan's files at their planned sizes (no orphaned bytes;
// keeping placement, a longer file no tensor moves into, out of or within counts: see
// keptDataFiles; a safetensors header as planned), checksums present where asked. The padding
// between tensors is not read. Files replaced since the model was opened never count as unchanged.
bool planKeepsLayout(const Model& model, const std::filesystem::path& modelPath,
    const SavePlan& plan, const SaveOptions& options);

// Whether options.compactFiles names the data file `location` (relative to the model's folder;
// any spelling of it: "./w.bin" is "w.bin").
bool compactsFile(const LayoutOptions& options, const std::string& location);

// Where every tensor of `model` is now, as placements (SaveOptions::keepPlacement): inline, or
// external in the file of its location (normalized) at its offset. A tensor readers need while
// building the graph is placed inline.
std::vector<TensorPlacement> keptPlacements(const Model& model);

// Fails on an unusable data file name, a safetensors save of a tensor whose dtype the format
// lacks or with dedupe, (absolute, escaping with ..), an inline result past
// the 2 GiB protobuf limit, a target's file limits (shardSizeIsLimit, maxShards), or, with
// dedupe, a tensor whose bytes cannot be read or a cancellation.
Result<SavePlan> planSave(
    const Model& model, const std::filesystem::path& modelPath, const SaveOptions& options);

} // namespace repack
