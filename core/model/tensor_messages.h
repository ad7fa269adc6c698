// The fields that lead from one protobuf message to the next on the way to the tensors: the wire
// scan (wire_scan.cpp) walks the file's bytes by them, `tensorAt` (tensor_at.cpp) a parsed model.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>

namespace repack::wire {

// The messages that hold tensors, as the tensor index walks them.
enum class Kind { None, Model, Graph, Node, Attribute, Sparse, Function, Tensor };

struct Child {
    Kind kind = Kind::None;
    bool repeated = false;
};

using MP = onnx::ModelProto;
using GP = onnx::GraphProto;
using NP = onnx::NodeProto;
using AP = onnx::AttributeProto;
using SP = onnx::SparseTensorProto;
using FP = onnx::FunctionProto;
using TP = onnx::TensorProto;

// The child messages that lead to tensors, by the field numbers protobuf generated from
// onnx.proto (ONNX 1.12).
inline Child childOf(Kind parent, uint32_t field)
{
    switch (parent) {
    case Kind::Model:
        if (field == MP::kGraphFieldNumber)
            return {Kind::Graph, false};
        if (field == MP::kFunctionsFieldNumber)
            return {Kind::Function, true};
        break;
    case Kind::Graph:
        if (field == GP::kNodeFieldNumber)
            return {Kind::Node, true};
        if (field == GP::kInitializerFieldNumber)
            return {Kind::Tensor, true};
        if (field == GP::kSparseInitializerFieldNumber)
            return {Kind::Sparse, true};
        break;
    case Kind::Node:
        if (field == NP::kAttributeFieldNumber)
            return {Kind::Attribute, true};
        break;
    case Kind::Attribute:
        switch (field) {
        case AP::kTFieldNumber:
            return {Kind::Tensor, false};
        case AP::kGFieldNumber:
            return {Kind::Graph, false};
        case AP::kTensorsFieldNumber:
            return {Kind::Tensor, true};
        case AP::kGraphsFieldNumber:
            return {Kind::Graph, true};
        case AP::kSparseTensorFieldNumber:
            return {Kind::Sparse, false};
        case AP::kSparseTensorsFieldNumber:
            return {Kind::Sparse, true};
        }
        break;
    case Kind::Sparse:
        if (field == SP::kValuesFieldNumber || field == SP::kIndicesFieldNumber)
            return {Kind::Tensor, false};
        break;
    case Kind::Function:
        if (field == FP::kNodeFieldNumber)
            return {Kind::Node, true};
        break;
    case Kind::Tensor:
    case Kind::None:
        break;
    }
    return {};
}

} // namespace repack::wire
