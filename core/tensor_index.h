// Walks a model and lists every tensor that carries data (SPEC section 2): initializers and
// sparse initializers of the main graph and of subgraphs at any depth, tensors in node
// attributes, and functions. Scopes: "graph", "graph/<node name or #index>/<attribute>"
// (GRAPHS attributes add "[i]"), "function:<domain>:<name>".
#pragma once

#include "problem.h"
#include "tensor_info.h"

#include <unordered_map>
#include <vector>

namespace onnx {
class ModelProto;
}

namespace repack {

// Index entries in declaration order, with sizes and storage filled in and the external
// reference keys parsed (not yet resolved against a directory). Problems with dims, dtypes and
// inline sizes go to `problems`. `inFile` maps tensors whose raw_data payload was left in the
// .onnx file to that payload's range.
using InlineRanges = std::unordered_map<const onnx::TensorProto*, FileRange>;
std::vector<TensorInfo> indexTensors(
    onnx::ModelProto& model, std::vector<Problem>& problems, const InlineRanges& inFile = {});

} // namespace repack
