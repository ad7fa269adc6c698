// Tensors whose values readers need while they build the graph (SPEC 5c): ONNX shape
// inference reads the values of some inputs (Reshape's shape, Slice's starts, a Pad's pads, ...)
// and refuses external ones: ONNX Runtime fails to load such a model with "Cannot parse data from
// external tensors" and so does onnx.shape_inference. Those tensors must stay inline, whatever
// the threshold or plan. The op and input list, and where it comes from: docs/targets.md.
#pragma once

#include "tensor_info.h"

#include <span>
#include <string_view>
#include <vector>

namespace onnx {
class ModelProto;
}

namespace repack {

// The inputs of an operator (ai.onnx, or ONNX Runtime's com.microsoft) whose values readers read
// while building the graph, by index; empty for other operators.
std::span<const int> graphBuildInputs(std::string_view domain, std::string_view opType);

// Sets TensorInfo::readAtGraphBuild for every tensor of `tensors` (an index of `model`) that
// such an input reads: an initializer of the graph or of an enclosing graph (subgraphs read
// outer-scope names), or a Constant node's value, at any depth and in functions; and every
// ConstantOfShape's `value` attribute.
void markGraphBuildInputs(const onnx::ModelProto& model, std::vector<TensorInfo>& tensors);

} // namespace repack
