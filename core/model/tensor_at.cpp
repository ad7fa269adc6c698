// Finds a tensor of a parsed model by the path the wire scan recorded to it.
#include "tensor_messages.h"
#include "wire_scan.h"

#include <onnx/onnx_pb.h>

namespace repack {
namespace {

using wire::Child;
using wire::childOf;
using wire::Kind;
using MP = onnx::ModelProto;
using GP = onnx::GraphProto;
using AP = onnx::AttributeProto;
using SP = onnx::SparseTensorProto;

template <typename T> T* element(google::protobuf::RepeatedPtrField<T>& field, uint32_t index)
{
    return index < static_cast<uint32_t>(field.size()) ? field.Mutable(static_cast<int>(index))
                                                       : nullptr;
}

} // namespace

onnx::TensorProto* tensorAt(onnx::ModelProto& model, const std::vector<WireStep>& path)
{
    // Never creates a message: only present fields and existing elements are followed.
    onnx::GraphProto* graph = nullptr;
    onnx::NodeProto* node = nullptr;
    onnx::AttributeProto* attribute = nullptr;
    onnx::SparseTensorProto* sparse = nullptr;
    onnx::FunctionProto* function = nullptr;
    onnx::TensorProto* tensor = nullptr;
    Kind kind = Kind::Model;
    for (const WireStep& step : path) {
        const Child child = childOf(kind, step.field);
        if (child.kind == Kind::None)
            return nullptr;
        switch (kind) {
        case Kind::Model:
            if (step.field == MP::kGraphFieldNumber)
                graph = model.has_graph() ? model.mutable_graph() : nullptr;
            else
                function = element(*model.mutable_functions(), step.index);
            break;
        case Kind::Graph:
            if (step.field == GP::kNodeFieldNumber)
                node = element(*graph->mutable_node(), step.index);
            else if (step.field == GP::kInitializerFieldNumber)
                tensor = element(*graph->mutable_initializer(), step.index);
            else
                sparse = element(*graph->mutable_sparse_initializer(), step.index);
            break;
        case Kind::Node:
            attribute = element(*node->mutable_attribute(), step.index);
            break;
        case Kind::Attribute:
            switch (step.field) {
            case AP::kTFieldNumber:
                tensor = attribute->has_t() ? attribute->mutable_t() : nullptr;
                break;
            case AP::kGFieldNumber:
                graph = attribute->has_g() ? attribute->mutable_g() : nullptr;
                break;
            case AP::kTensorsFieldNumber:
                tensor = element(*attribute->mutable_tensors(), step.index);
                break;
            case AP::kGraphsFieldNumber:
                graph = element(*attribute->mutable_graphs(), step.index);
                break;
            case AP::kSparseTensorFieldNumber:
                sparse
                    = attribute->has_sparse_tensor() ? attribute->mutable_sparse_tensor() : nullptr;
                break;
            default:
                sparse = element(*attribute->mutable_sparse_tensors(), step.index);
                break;
            }
            break;
        case Kind::Sparse:
            if (step.field == SP::kValuesFieldNumber)
                tensor = sparse->has_values() ? sparse->mutable_values() : nullptr;
            else
                tensor = sparse->has_indices() ? sparse->mutable_indices() : nullptr;
            break;
        case Kind::Function:
            node = element(*function->mutable_node(), step.index);
            break;
        case Kind::Tensor:
        case Kind::None:
            return nullptr;
        }
        kind = child.kind;
        const bool present = (kind == Kind::Graph && graph) || (kind == Kind::Node && node)
            || (kind == Kind::Attribute && attribute) || (kind == Kind::Sparse && sparse)
            || (kind == Kind::Function && function) || (kind == Kind::Tensor && tensor);
        if (!present)
            return nullptr;
    }
    return kind == Kind::Tensor ? tensor : nullptr;
}

} // namespace repack
