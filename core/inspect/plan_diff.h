// What a pending save changes: the current layout of a model against the plan of the save
// (core/plan/save_plan.h), tensor by tensor and file by file, computed without writing. The CLI
// prints it (`plan --diff`); the GUI's before/after view draws it.
#pragma once

#include "core/change_kind.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace repack {

class Model;
struct FileLayout;
struct SavePlan;

// Where a tensor's bytes are on one side.
struct TensorPlace {
    bool external = false;
    std::string location; // the data file as the model spells it, when external
    uint64_t offset = 0;
    uint64_t length = 0; // external: the range's length; inline: the tensor's byte size
};

// A tensor before the save: the input of diffPlan for callers that keep their own copy of a
// model's tensors (a GUI snapshot); parallel to Model::tensors().
struct TensorBefore {
    std::string scope;
    std::string name;
    uint64_t bytes = 0; // the tensor's byte size
    TensorPlace place;
};

struct PlanDiffTensor {
    std::string scope;
    std::string name;
    ChangeKind kind = ChangeKind::Unchanged; // Unchanged, Moved, NewFile, ToInline, ToExternal
    TensorPlace before;
    TensorPlace after;
};

// A data file on either side; a file only after is new, one only before is no longer used.
struct PlanDiffFile {
    std::string location; // as the model (before) or the plan (after) spells it
    bool before = false;
    bool after = false;
    uint64_t bytesBefore = 0; // file size, padding and orphaned ranges included
    uint64_t bytesAfter = 0;
    uint64_t paddingBefore = 0;
    uint64_t paddingAfter = 0;
    // Bytes no tensor reads, past what alignment explains (core/plan/file_layout.h). A save
    // laid out anew writes none; keeping placement, a tensor moved out of a file leaves its range
    // orphaned, until the file is compacted (LayoutOptions::compactFiles).
    uint64_t orphanedBefore = 0;
    uint64_t orphanedAfter = 0;
};

// "new" (only after), "unused" (only before: the save stops using it), "resized", "unchanged".
std::string_view planFileChange(const PlanDiffFile& file);

struct PlanDiff {
    std::vector<PlanDiffTensor> tensors; // parallel to the model's tensors
    std::vector<PlanDiffFile> files; // by location (compared lexically normal)
    uint64_t toInlineBytes = 0; // bytes that come into the .onnx
    uint64_t toExternalBytes = 0; // bytes that leave it

    size_t count(ChangeKind kind) const;
    // No tensor changes place and every file keeps its size: the save would change nothing
    // that a reader of the layout sees.
    bool changesNothing() const;
};

// Tensor i of the result is tensor i of the model (plan.tensors is parallel to it). A tensor
// is ToInline or ToExternal when its storage flips, NewFile when it goes into a file that
// does not exist before, Moved when its file or offset changes, else Unchanged. `layouts`
// describe the data files before (core/plan/file_layout.h); a file an external tensor names that
// has no layout (missing, invalid) still counts as existing before.
PlanDiff diffPlan(const std::vector<TensorBefore>& before, const std::vector<FileLayout>& layouts,
    const SavePlan& plan);
PlanDiff diffPlan(const Model& model, const SavePlan& plan);

} // namespace repack
