// Two storage layouts of the same tensors, "before" and "after", as plain data a view can draw
// and a test can check without painting: one lane per data file (and one for inline storage),
// each with the tensors' ranges, padding and orphaned gaps on either side, and per tensor where
// it was, where it is, and what kind of change that is. Built from the current model and the
// plan of a pending save, or from two models and the core's diff of them.
#pragma once

#include "core/inspect/diff.h"

#include <QString>

#include <cstdint>
#include <vector>

namespace repack {
struct SavePlan;
struct TensorBefore;
} // namespace repack

namespace ui {

struct ModelSnapshot;

// The core's vocabulary (core/change_kind.h), shown in colours and translated names here.
using repack::ChangeKind;
using repack::kChangeKindCount;

QString changeKindName(ChangeKind kind); // "moved", "to inline", ..., translated

// Where a tensor is on one side; lane -1 when it is not on that side at all.
struct DiffPlace {
    int lane = -1;
    bool external = false;
    uint64_t offset = 0; // in the lane (inline: the sum of the inline tensors declared before)
    uint64_t length = 0;
    QString storage; // "inline" or the data file location
    int row = -1; // the tensor's index in its model (snapshot row)
};

struct DiffTensor {
    QString name;
    QString scope;
    ChangeKind kind = ChangeKind::Unchanged;
    bool contentPending = false; // A/B: bytes not compared yet
    DiffPlace before;
    DiffPlace after;
};

struct DiffGap {
    uint64_t offset = 0;
    uint64_t length = 0;
    bool orphaned = false; // else alignment padding
    bool header = false; // a safetensors file's header (neither)
};

struct LaneSide {
    bool present = false;
    uint64_t bytes = 0; // file size (inline: bytes of inline tensors)
    uint64_t padding = 0;
    uint64_t orphaned = 0;
    std::vector<int> tensors; // indices into LayoutDiff::tensors, by offset
    std::vector<DiffGap> gaps;
};

struct DiffLane {
    QString location; // the data file as models spell it; empty for the inline lane
    bool isInline = false;
    LaneSide before;
    LaneSide after;
};

struct LayoutDiff {
    QString beforeTitle;
    QString afterTitle;
    // Inline first, then data files on both sides, only before, only after (each by location).
    std::vector<DiffLane> lanes;
    std::vector<DiffTensor> tensors;
    uint64_t protobufBefore = 0;
    uint64_t protobufAfter = 0;
    bool protobufAfterEstimated = false; // a plan: the .onnx is not written yet

    size_t count(ChangeKind kind) const;
};

// The current layout of `current` against what planSave produced for it (`plan.tensors` is
// parallel to `current.tensors`): tensor i of the result is tensor i of the model.
LayoutDiff beforeAfterDiff(const ModelSnapshot& current, const repack::SavePlan& plan);
// The snapshot's tensors as core's plan diff takes them (repack::diffPlan).
std::vector<repack::TensorBefore> tensorsBefore(const ModelSnapshot& snap);

// Model A (`a`, before) against model B (`b`, after) from the core's diff entries, one diff
// tensor per entry in the same order. With `contentCompared` false the entries come from a
// pass that read no bytes: matched pairs of the same size are marked contentPending.
LayoutDiff compareDiff(const ModelSnapshot& a, const ModelSnapshot& b,
    const std::vector<repack::DiffEntry>& entries, bool contentCompared);

// Takes the statuses of a full (byte-comparing) diff of the same two models into `diff`, built
// by compareDiff from the same models. Returns the indices whose kind changed.
std::vector<int> applyContentDiff(LayoutDiff& diff, const std::vector<repack::DiffEntry>& entries);

} // namespace ui
