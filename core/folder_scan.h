// What else lives in a model's folder (SPEC 5a): the other models that read a file, leftovers
// of saves that are no longer running, and data files that no model there uses.
#pragma once

#include "problem.h"
#include "result.h"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace repack {

class Model;

// The .onnx files directly in `dir` (never temporaries), other than those in `exclude`, with an
// external tensor that reads `file` (same device and inode, symlinks followed; `file` itself
// may be a symlink). A model file is parsed only when its bytes contain the file's name or the
// name of a symlink in `dir` that leads to it, so a folder of large models is scanned at
// memory speed.
std::vector<std::filesystem::path> modelsReferencing(const std::filesystem::path& dir,
    const std::filesystem::path& file, const std::vector<std::filesystem::path>& exclude = {});

struct FolderEntry {
    std::filesystem::path path;
    uint64_t bytes = 0;
};

struct FolderReport {
    // Temporaries of saves no longer running (the folder's lock is free) that no model in the
    // folder references.
    std::vector<FolderEntry> leftovers;
    // Data files (by name: *.data, *.onnx_data, *.onnx_data_N, *.bin, ...) that no model in the
    // folder references.
    std::vector<FolderEntry> unusedData;
    // Data files `model` reads that have more than one hard link.
    std::vector<FolderEntry> hardLinked;
};

// Scans the folder of `model` (its base directory).
FolderReport scanFolder(const Model& model);

// scanFolder as warnings with codes leftover-temporary, unused-data-file, hard-linked-data.
std::vector<Problem> housekeepingProblems(const Model& model);

// `onnx-repack clean`: under the folder's lock, removes the leftovers of dead saves in the
// folder of `modelPath` (never a temporary some model there references). Returns what it
// removed.
Result<std::vector<FolderEntry>> removeLeftovers(const std::filesystem::path& modelPath);

} // namespace repack
