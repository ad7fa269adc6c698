#include "tensor_protos.h"

#include <onnx/onnx_pb.h>

namespace repack {
namespace {

// The TensorProtos in index order, as Walker visits them.
class ProtoLister {
public:
    explicit ProtoLister(std::vector<onnx::TensorProto*>& out)
        : m_out(out)
    {
    }

    void graph(onnx::GraphProto& g)
    {
        for (auto& init : *g.mutable_initializer())
            m_out.push_back(&init);
        for (auto& sparse : *g.mutable_sparse_initializer())
            this->sparse(sparse);
        nodes(*g.mutable_node());
    }

    void nodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>& list)
    {
        for (auto& n : list)
            node(n);
    }

    void node(onnx::NodeProto& node)
    {
        for (auto& attr : *node.mutable_attribute()) {
            if (attr.has_t())
                m_out.push_back(attr.mutable_t());
            for (auto& t : *attr.mutable_tensors())
                m_out.push_back(&t);
            if (attr.has_sparse_tensor())
                sparse(*attr.mutable_sparse_tensor());
            for (auto& s : *attr.mutable_sparse_tensors())
                sparse(s);
            if (attr.has_g())
                graph(*attr.mutable_g());
            for (auto& g : *attr.mutable_graphs())
                graph(g);
        }
    }

private:
    void sparse(onnx::SparseTensorProto& s)
    {
        m_out.push_back(s.mutable_values());
        m_out.push_back(s.mutable_indices());
    }

    std::vector<onnx::TensorProto*>& m_out;
};

} // namespace

std::vector<onnx::TensorProto*> tensorProtos(onnx::NodeProto& node)
{
    std::vector<onnx::TensorProto*> out;
    ProtoLister(out).node(node);
    return out;
}

std::vector<onnx::TensorProto*> tensorProtos(onnx::ModelProto& model)
{
    std::vector<onnx::TensorProto*> out;
    ProtoLister lister(out);
    if (model.has_graph())
        lister.graph(*model.mutable_graph());
    for (auto& function : *model.mutable_functions())
        lister.nodes(*function.mutable_node());
    return out;
}

} // namespace repack
