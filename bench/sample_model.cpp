#include "sample_model.h"

#include "buffered_file.h"
#include "weight_fill.h"

#include "core/dtype.h"

#include <onnx/onnx_pb.h>

#include <cstring>

namespace fs = std::filesystem;

namespace repack::bench {
namespace {

constexpr uint64_t kSeed = 20240601;

// Where each external tensor goes in the data file. The layout is spelled out so that the
// padding (zeros before the aligned lm_head.weight) and the orphaned range (stale bytes no
// tensor references) are known independently of any tool that reads it back.
struct Placement {
    const char* name;
    int32_t dataType;
    std::vector<int64_t> dims;
    uint64_t offset;
    uint64_t length;
};

const std::vector<Placement>& placements()
{
    static const std::vector<Placement> list = {
        {"proj.weight", dtype::Float16, {32, 64}, 0, 4096},
        {"embed.weight", dtype::Float, {64, 16}, 4096, 4096},
        {"mlp.weight", dtype::Float, {16, 32}, 8192, 2048},
        // 10240 .. 13240: 3000 orphaned bytes, left over as by an old save
        {"lm_head.bias", dtype::Float, {256}, 13240, 1024},
        {"branch.bias", dtype::Float, {256}, 14264, 1024},
        // 15288 .. 16384: zero padding up to a 4096-aligned offset
        {"lm_head.weight", dtype::Float, {64, 256}, 16384, 65536},
    };
    return list;
}
constexpr uint64_t kOrphanOffset = 10240;
constexpr uint64_t kOrphanLength = 3000;

onnx::TensorProto externalTensor(const Placement& p, const std::string& dataName)
{
    onnx::TensorProto t;
    t.set_name(p.name);
    t.set_data_type(p.dataType);
    for (int64_t dim : p.dims)
        t.add_dims(dim);
    auto entry = [&t](const char* key, std::string value) {
        auto* e = t.add_external_data();
        e->set_key(key);
        e->set_value(std::move(value));
    };
    entry("location", dataName);
    entry("offset", std::to_string(p.offset));
    entry("length", std::to_string(p.length));
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    return t;
}

Status writeData(const fs::path& path)
{
    auto file = BufferedFile::create(path);
    if (!file)
        return file.error();
    uint64_t number = 0;
    for (const auto& p : placements()) {
        Status s;
        if (p.offset == kOrphanOffset + kOrphanLength) {
            WeightFill stale(tensorSeed(kSeed, 999), dtype::Undefined);
            s = file->writeFill(stale, kOrphanLength);
        } else if (p.offset > file->position()) {
            s = file->writeZeros(p.offset - file->position());
        }
        WeightFill fill(tensorSeed(kSeed, number++), p.dataType);
        if (s)
            s = file->writeFill(fill, p.length);
        if (!s)
            return s;
    }
    return file->close();
}

onnx::TensorProto rawFloats(
    const std::string& name, std::vector<int64_t> dims, const std::vector<float>& values)
{
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : dims)
        t.add_dims(dim);
    std::string raw(values.size() * sizeof(float), '\0');
    std::memcpy(raw.data(), values.data(), raw.size()); // little-endian host
    t.set_raw_data(std::move(raw));
    return t;
}

onnx::TensorProto typedFloats(const std::string& name, std::vector<int64_t> dims, int count)
{
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : dims)
        t.add_dims(dim);
    for (int i = 0; i < count; ++i)
        t.add_float_data(0.001f * static_cast<float>(i + 1));
    return t;
}

void addValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
    const std::string& name, int32_t type, std::vector<int64_t> dims)
{
    auto* value = list->Add();
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(type);
    auto* shape = tensor->mutable_shape();
    for (int64_t dim : dims)
        shape->add_dim()->set_dim_value(dim);
}

onnx::NodeProto* addNode(onnx::GraphProto& g, const std::string& op,
    std::vector<std::string> inputs, const std::string& output)
{
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(output);
    for (auto& input : inputs)
        n->add_input(std::move(input));
    n->add_output(output);
    return n;
}

// then: h + branch.bias (an external subgraph initializer); else: h * branch.scale (typed).
onnx::GraphProto branch(bool useBias, const std::string& dataName)
{
    onnx::GraphProto g;
    g.set_name(useBias ? "then_add_bias" : "else_scale");
    const std::string out = useBias ? "then_out" : "else_out";
    if (useBias) {
        *g.add_initializer() = externalTensor(placements()[4], dataName);
        addNode(g, "Add", {"scaled", "branch.bias"}, out);
    } else {
        *g.add_initializer() = typedFloats("branch.scale", {1}, 1);
        addNode(g, "Mul", {"scaled", "branch.scale"}, out);
    }
    addValue(g.mutable_output(), out, onnx::TensorProto::FLOAT, {1, 256});
    return g;
}

onnx::ModelProto buildProto(const std::string& dataName)
{
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.set_producer_name("repack-genmodel");
    model.set_producer_version("0.1.0");
    model.set_doc_string("Onnx Repack sample: every storage case in a small model");
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(13);

    auto& g = *model.mutable_graph();
    g.set_name("sample");
    addValue(g.mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 64});
    addValue(g.mutable_input(), "use_bias", onnx::TensorProto::BOOL, {});
    addValue(g.mutable_output(), "y", onnx::TensorProto::FLOAT, {256});

    const auto& p = placements();
    *g.add_initializer() = externalTensor(p[1], dataName); // embed.weight
    *g.add_initializer() = rawFloats("norm.weight", {16}, std::vector<float>(16, 1.0f));
    *g.add_initializer() = externalTensor(p[2], dataName); // mlp.weight
    *g.add_initializer() = typedFloats("mlp.bias", {32}, 32);
    *g.add_initializer() = externalTensor(p[0], dataName); // proj.weight f16
    *g.add_initializer() = externalTensor(p[5], dataName); // lm_head.weight
    *g.add_initializer() = externalTensor(p[3], dataName); // lm_head.bias
    auto& shape = *g.add_initializer();
    shape.set_name("out_shape");
    shape.set_data_type(onnx::TensorProto::INT64);
    shape.add_dims(1);
    shape.add_int64_data(256);

    addNode(g, "MatMul", {"x", "embed.weight"}, "h1");
    addNode(g, "Mul", {"h1", "norm.weight"}, "h2");
    addNode(g, "MatMul", {"h2", "mlp.weight"}, "h3");
    addNode(g, "Add", {"h3", "mlp.bias"}, "h4");
    auto* cast = addNode(g, "Cast", {"proj.weight"}, "proj32");
    auto* to = cast->add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(onnx::TensorProto::FLOAT);
    addNode(g, "MatMul", {"h4", "proj32"}, "h5");
    addNode(g, "MatMul", {"h5", "lm_head.weight"}, "h6");
    addNode(g, "Add", {"h6", "lm_head.bias"}, "logits");

    auto* constant = addNode(g, "Constant", {}, "temperature");
    auto* value = constant->add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    *value->mutable_t() = rawFloats("temperature", {1}, {2.0f});
    addNode(g, "Div", {"logits", "temperature"}, "scaled");

    auto* ifNode = addNode(g, "If", {"use_bias"}, "branched");
    ifNode->set_name("branch");
    for (bool useBias : {true, false}) {
        auto* attr = ifNode->add_attribute();
        attr->set_name(useBias ? "then_branch" : "else_branch");
        attr->set_type(onnx::AttributeProto::GRAPH);
        *attr->mutable_g() = branch(useBias, dataName);
    }
    addNode(g, "Reshape", {"branched", "out_shape"}, "y");
    return model;
}

} // namespace

Status writeSampleModel(const fs::path& path)
{
    const std::string dataName = path.filename().string() + ".data";
    if (Status s = writeData(path.parent_path() / dataName); !s)
        return s;
    auto file = BufferedFile::create(path);
    if (!file)
        return file.error();
    const std::string bytes = buildProto(dataName).SerializeAsString();
    if (Status s = file->write(std::as_bytes(std::span(bytes.data(), bytes.size()))); !s)
        return s;
    return file->close();
}

} // namespace repack::bench
