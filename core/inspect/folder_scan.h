// What else lives in a model's folder (SPEC 5a): leftovers of saves that are no longer running,
// and data files that no model there uses (who reads a file: readers.h).
#pragma once

#include "core/problem.h"
#include "core/result.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace repack {

class Model;

struct FolderEntry {
    std::filesystem::path path;
    uint64_t bytes = 0;
};

// The folder is the model's base directory plus the subfolders of it that hold the model's data
// files (`--data weights/w.bin`); the other models that may read a candidate are those readersOf
// finds from the base directory down to the candidate's folder, each walked at most once per
// scan, and only when some candidate is not the model's own.
struct FolderReport {
    // Temporaries of saves no longer running (the folder's lock is free) that no model in the
    // folder names (by path, symlinks resolved: a temporary that is only another link to a file
    // a model reads under its final name is still a leftover).
    std::vector<FolderEntry> leftovers;
    // Data files (by name: *.data, *.onnx_data, *.onnx_data_N, *.bin, shards, ...) whose file
    // (device and inode) no model in the folder reads under any name.
    std::vector<FolderEntry> unusedData;
    // Data files `model` reads that have more than one hard link.
    std::vector<FolderEntry> hardLinked;
    // Models of the folder that may name a candidate but could not be read: while there is one,
    // nothing is reported as a leftover or unused (it may read them).
    std::vector<std::filesystem::path> unreadable;
};

// Scans the folder of `model` (its base directory). `model`'s own references come from memory,
// so an unsaved change counts. Never throws; what cannot be read is left out.
FolderReport scanFolder(const Model& model);

// The folders a scan of `model` looks in: its folder, then the subfolders of it that hold its
// data files.
std::vector<std::filesystem::path> scannedFolders(const Model& model);

// FolderReport::leftovers for a caller that holds the lock of every folder of `model` (so no
// temporary belongs to a live save). Fails when the folder cannot be scanned.
Result<std::vector<FolderEntry>> deadSaveLeftovers(const Model& model);

// scanFolder as warnings with codes leftover-temporary, unused-data-file, hard-linked-data.
std::vector<Problem> housekeepingProblems(const Model& model);

} // namespace repack
