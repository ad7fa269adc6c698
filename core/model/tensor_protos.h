// The TensorProtos of a parsed model in the tensor index's order (Model::tensors()), for the
// operations that rewrite protos.
#pragma once

#include <vector>

namespace onnx {
class ModelProto;
class NodeProto;
class TensorProto;
} // namespace onnx

namespace repack {

// Every TensorProto of `model` in index order: initializers, sparse initializers (values,
// then indices), then node attributes (subgraphs in place), graph by graph, then functions.
std::vector<onnx::TensorProto*> tensorProtos(onnx::ModelProto& model);
// Those of one node (its attributes, subgraphs in place), in the same order.
std::vector<onnx::TensorProto*> tensorProtos(onnx::NodeProto& node);

} // namespace repack
