// ONNX models built in code: a main graph, Constant nodes, If/Loop-style subgraphs, GRAPHS
// attributes, model functions; saved with protobuf serialization to a path.
#pragma once

#include <onnx/onnx_pb.h>

#include <QString>

#include <string>
#include <vector>

namespace fixtures {

// An empty model: IR 8, default opset 17, a main graph named "main".
onnx::ModelProto emptyModel();

// A node of `opType` named `name` (may be empty) appended to `nodes`.
onnx::NodeProto& addNode(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
    const std::string& opType, const std::string& name);
onnx::NodeProto& addNode(
    onnx::GraphProto& graph, const std::string& opType, const std::string& name);

// A Constant node whose TENSOR attribute "value" holds `value`.
onnx::NodeProto& addConstant(
    onnx::GraphProto& graph, const std::string& name, onnx::TensorProto value);
// A TENSORS attribute `attr` on `node` (as custom ops use them).
void addTensorsAttribute(
    onnx::NodeProto& node, const std::string& attr, std::vector<onnx::TensorProto> tensors);
// A GRAPH attribute `attr` (If's then_branch, Loop's body): returns the new, empty subgraph.
onnx::GraphProto& addSubgraph(onnx::NodeProto& node, const std::string& attr);
// A GRAPHS attribute `attr` with `count` empty subgraphs; returns the attribute.
onnx::AttributeProto& addGraphsAttribute(onnx::NodeProto& node, const std::string& attr, int count);

// A model-local function; the caller fills its nodes.
onnx::FunctionProto& addFunction(
    onnx::ModelProto& model, const std::string& domain, const std::string& name);

// Serializes `model` to `path`. Returns false on failure.
bool saveModel(const onnx::ModelProto& model, const QString& path);

} // namespace fixtures
