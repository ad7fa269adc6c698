// Comparing the storage layouts of two models, tensor by tensor (matched by scope + name).
#pragma once

#include "result.h"

#include <string>
#include <vector>

namespace repack {

class Model;

enum class DiffStatus { Added, Removed, Moved, StorageChanged, ContentChanged, Unchanged };

struct DiffEntry {
    DiffStatus status = DiffStatus::Unchanged;
    std::string scope;
    std::string name;
    int a = -1; // index into a.tensors(), -1 when added
    int b = -1; // index into b.tensors(), -1 when removed
};

// One entry per tensor of either model, in A's declaration order then B's additions.
// A pair whose dtype, shape or bytes differ is ContentChanged (reading both through their
// mappings); otherwise StorageChanged when one side is inline and the other external, Moved
// when both are external at a different file or offset. Fails when a tensor cannot be read.
Result<std::vector<DiffEntry>> diffModels(const Model& a, const Model& b);

std::string_view diffStatusName(DiffStatus status); // "added", "storage_changed", ...

} // namespace repack
