// Tensors whose bytes are identical (tied embeddings, repeated constants): found by dtype, shape
// and size, then a sample of their bytes, then SHA-1, and confirmed byte for byte. Used by
// `repack --dedupe` (SaveOptions::dedupe) to store such tensors once, and by the audit.
#pragma once

#include "core/progress.h"
#include "core/result.h"

#include <compare>
#include <cstddef>
#include <span>
#include <vector>

namespace repack {

class Model;

struct IdenticalGroup {
    std::vector<size_t> tensors; // indices into Model::tensors(), in the order of `candidates`
    // How many distinct byte ranges hold the group's bytes now (external tensors that already
    // share one range count once; each inline tensor is its own copy).
    size_t copies = 0;
};

// Groups of two or more of `candidates` with equal dtype, shape and bytes. Zero-byte, STRING
// and unreadable tensors never group. Reads (mapped, through Model::read) only tensors that
// have a same-shaped partner; fails naming the tensor when a read fails, or when cancelled.
Result<std::vector<IdenticalGroup>> findIdenticalTensors(const Model& model,
    const std::vector<size_t>& candidates, const ProgressCallback& progress = {},
    const CancelToken* cancel = nullptr);

// A tensor of one of several models: the model's position in the list, the tensor's index.
struct TensorRef {
    size_t model = 0;
    size_t tensor = 0;
    auto operator<=>(const TensorRef&) const = default;
};

struct IdenticalAcross {
    std::vector<TensorRef> tensors; // sorted
    size_t copies = 0; // distinct byte ranges, as IdenticalGroup's (one file under two names: one)
};

// findIdenticalTensors over the tensors of several models (the graphs of a folder): external
// tensors of different models that read one range of one file (device and inode) are one copy.
Result<std::vector<IdenticalAcross>> findIdenticalAcross(std::span<const Model* const> models,
    const std::vector<TensorRef>& candidates, const ProgressCallback& progress = {},
    const CancelToken* cancel = nullptr);

} // namespace repack
