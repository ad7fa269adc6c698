// Tensors whose bytes are identical (tied embeddings, repeated constants): found by dtype, shape
// and size, then a sample of their bytes, then SHA-1, and confirmed byte for byte. Used by
// `repack --dedupe` (SaveOptions::dedupe) to store such tensors once, and by the audit.
#pragma once

#include "core/progress.h"
#include "core/result.h"

#include <cstddef>
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

} // namespace repack
