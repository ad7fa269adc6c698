// Tensors of one scope that share a name: an error for initializers (onnx.checker rejects
// them), a warning for attribute tensors (diffs and plans match tensors by scope and name).
#pragma once

#include "core/problem.h"
#include "tensor_info.h"

#include <vector>

namespace repack {

// Adds a problem at the first tensor of each group of `tensors` sharing a scope and a name.
void reportDuplicateNames(const std::vector<TensorInfo>& tensors, std::vector<Problem>& problems);

} // namespace repack
