// The storage audit `inspect` adds to a model's problems: warnings, each naming the
// tensor or file and the fix, never errors, so no exit code changes because of them.
//   not-mappable             a tensor of 1 MiB or more not at a multiple of 4 KiB: readers
//                            cannot memory-map it and copy it instead
//   not-mappable-on-windows  4 KiB- but not 64 KiB-aligned, when the audit is for a target that
//                            wants 64 KiB (ort): ONNX Runtime before 1.23 copies it on Windows.
//                            The default save aligns to 4 KiB, which every current reader maps
//                            (docs/targets.md has the figures), so a plain audit does not ask
//                            for 64 KiB.
//   browser-file-limit       a data file of 0x7fe00000 bytes or more: no browser loads it
//   protobuf-near-limit      the .onnx file is past 80 % of protobuf's 2 GiB
//   unused-initializer       a graph initializer no node (at any depth) or graph output uses
//                            (not in a model whose main graph has no nodes: a weight container)
//   duplicate-bytes          tensors of 1 KiB or more with identical dtype, shape and bytes
//                            stored more than once, with the bytes the extra copies take
//   orphaned-bytes           a data file's bytes no tensor reads, past what alignment explains
//                            (core/plan/file_layout.h), as a tensor moved out of the file
//                            while every other one kept its place leaves them; the fix compacts
//                            the file (LayoutOptions::compactFiles). Not for a file another
//                            model reads (core/inspect/readers.h): the bytes may be its own
// Duplicate names are found by the index itself (code::DuplicateName).
#pragma once

#include "core/problem.h"
#include "core/progress.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace repack {

class Model;
struct FileLayout;

struct AuditOptions {
    uint64_t largeTensor = 1u << 20; // tensors of at least this size should be mappable
    // The alignment the readers audited for want: a page (4 KiB), or a target's (ort: 64 KiB);
    // also what the data files' padding is counted against (orphaned-bytes), unless:
    uint64_t alignment = 4096;
    // The alignment the data files were written with, when the user knows it (inspect --align):
    // their gaps are counted against it instead (gapAlignment).
    std::optional<uint64_t> writtenAlignment = std::nullopt;
    // The orphaned-bytes warnings; false: the caller says them (the desktop app, which counts
    // the gaps again whenever the alignment it would save with changes).
    bool orphanedBytes = true;
    uint64_t duplicateMin = 1024; // smaller identical tensors are not worth a warning
    bool compareBytes = true; // duplicate-bytes reads (mapped) tensors with a same-shaped twin
    ProgressCallback progress = {};
    const CancelToken* cancel = nullptr;
};

std::vector<Problem> auditModel(const Model& model, const AuditOptions& options = {});

// What the data files' gaps are counted against (padding, the rest orphaned): the alignment
// they were written with when known, else the one audited for.
inline uint64_t gapAlignment(const AuditOptions& options)
{
    return options.writtenAlignment.value_or(options.alignment);
}

// Of `files` (data files of `model`, from computeLayout), whether each holds bytes that are the
// model's alone: no other model reads it, or could (core/inspect/readers.h). Only there is a
// byte no tensor of `model` reads orphaned; elsewhere it may be another model's. False for each
// file of a remote model: its folder is not searched.
std::vector<bool> readOnlyBy(const Model& model, const std::vector<FileLayout>& files);

// The orphaned-bytes warning for data file `file` of the model named `modelName` (a file
// readOnlyBy the model, its gaps counted): what it holds and the fix. The audit's text, and the
// desktop app's when it counts the gaps again against another alignment.
Problem orphanedBytesWarning(const std::string& modelName, const FileLayout& file);

} // namespace repack
