// Comparing the storage layouts of two models, tensor by tensor (matched by scope + name).
#pragma once

#include "core/change_kind.h"
#include "core/progress.h"
#include "core/result.h"

#include <string>
#include <vector>

namespace repack {

class Model;

struct DiffEntry {
    ChangeKind kind = ChangeKind::Unchanged;
    std::string scope;
    std::string name;
    int a = -1; // index into a.tensors(), -1 when added
    int b = -1; // index into b.tensors(), -1 when removed
};

struct DiffOptions {
    // false: classify by dtype, shape, size and place only, reading no bytes (a quick first
    // pass a GUI shows at once; pairs of equal size are never ContentChanged then).
    bool compareContent = true;
    // Bytes compared so far out of the bytes that must be read (pairs sharing a file range are
    // equal without reading and count for nothing); called between tensors.
    ProgressCallback progress;
    const CancelToken* cancel = nullptr; // checked between tensors; fails with "cancelled"
};

// One entry per tensor of either model, in A's declaration order then B's additions.
// A pair whose dtype, shape or bytes differ is ContentChanged; otherwise ToInline or ToExternal
// when one side is inline and the other external, Moved when both are external at a different
// file or offset. Bytes are compared through the mappings (memcmp, no hashing), except when both
// tensors are the same byte range of the same file (device, inode, size and modification time
// of the DataFile both models opened): those are equal without reading, so a diff costs time
// in the bytes that differ in storage. Fails when a tensor cannot be read, or on cancel.
Result<std::vector<DiffEntry>> diffModels(
    const Model& a, const Model& b, const DiffOptions& options = {});

} // namespace repack
