#include "model_builder.h"

#include <QFile>

namespace fixtures {

onnx::ModelProto emptyModel()
{
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.set_producer_name("repack-fixtures");
    model.set_producer_version("1");
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(17);
    model.mutable_graph()->set_name("main");
    return model;
}

onnx::NodeProto& addNode(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
    const std::string& opType, const std::string& name)
{
    onnx::NodeProto* node = nodes.Add();
    node->set_op_type(opType);
    node->set_name(name);
    return *node;
}

onnx::NodeProto& addNode(
    onnx::GraphProto& graph, const std::string& opType, const std::string& name)
{
    return addNode(*graph.mutable_node(), opType, name);
}

onnx::NodeProto& addConstant(
    onnx::GraphProto& graph, const std::string& name, onnx::TensorProto value)
{
    onnx::NodeProto& node = addNode(graph, "Constant", name);
    node.add_output(name + "_out");
    auto* attr = node.add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    *attr->mutable_t() = std::move(value);
    return node;
}

void addTensorsAttribute(
    onnx::NodeProto& node, const std::string& attr, std::vector<onnx::TensorProto> tensors)
{
    auto* a = node.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::TENSORS);
    for (auto& t : tensors)
        *a->add_tensors() = std::move(t);
}

onnx::GraphProto& addSubgraph(onnx::NodeProto& node, const std::string& attr)
{
    auto* a = node.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(node.name() + "_" + attr);
    return *a->mutable_g();
}

onnx::AttributeProto& addGraphsAttribute(onnx::NodeProto& node, const std::string& attr, int count)
{
    auto* a = node.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPHS);
    for (int i = 0; i < count; ++i)
        a->add_graphs()->set_name(attr + std::to_string(i));
    return *a;
}

onnx::FunctionProto& addFunction(
    onnx::ModelProto& model, const std::string& domain, const std::string& name)
{
    auto* f = model.add_functions();
    f->set_domain(domain);
    f->set_name(name);
    auto* opset = f->add_opset_import();
    opset->set_domain("");
    opset->set_version(17);
    return *f;
}

bool saveModel(const onnx::ModelProto& model, const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    const std::string bytes = model.SerializeAsString();
    return file.write(bytes.data(), static_cast<qint64>(bytes.size()))
        == static_cast<qint64>(bytes.size());
}

} // namespace fixtures
