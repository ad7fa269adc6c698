#include "synthetic_model.h"

#include "weight_fill.h"

#include "core/dtype.h"

#include <algorithm>

namespace repack::bench {
namespace {

constexpr int64_t kUpFactor = 4;
// Bytes per layer besides the extras: up f32 [d,4d], down f16 [4d,d], norm/b_down f32 [d],
// b_up f32 [4d].
uint64_t layerBytes(int64_t d)
{
    const uint64_t dd = static_cast<uint64_t>(d);
    return dd * dd * kUpFactor * 4 + dd * dd * kUpFactor * 2 + dd * 4 * (2 + kUpFactor);
}

int64_t chooseHidden(const LlmShape& shape)
{
    if (shape.hidden > 0)
        return shape.hidden;
    int64_t d = 2048;
    // At least ~8 layers, and many small tensors must not eat more than half the budget.
    while (d > 16
        && (shape.weightBytes < 8 * layerBytes(d)
            || shape.tensors * 4 * static_cast<uint64_t>(d) > shape.weightBytes / 2))
        d /= 2;
    return d;
}

class Planner {
public:
    Planner(SyntheticModel& model, uint64_t seed)
        : m_model(model)
        , m_seed(seed)
    {
    }

    std::string weight(std::string name, int32_t type, std::vector<int64_t> dims)
    {
        uint64_t elements = 1;
        for (int64_t dim : dims)
            elements *= static_cast<uint64_t>(dim);
        const uint64_t number = m_model.weights.size();
        m_model.weights.push_back({name, type, std::move(dims),
            dtype::byteSize(type, elements).value_or(0), tensorSeed(m_seed, number)});
        return name;
    }

    // Adds a node and returns its output, named `output` or a fresh "t<N>".
    std::string node(const std::string& op, std::vector<std::string> inputs, int32_t castTo = 0,
        std::string output = {})
    {
        auto* n = m_model.proto.mutable_graph()->add_node();
        const std::string out = output.empty() ? "t" + std::to_string(m_nextValue++) : output;
        n->set_op_type(op);
        n->set_name(op + "_" + out);
        for (auto& input : inputs)
            n->add_input(std::move(input));
        n->add_output(out);
        if (castTo) {
            auto* to = n->add_attribute();
            to->set_name("to");
            to->set_type(onnx::AttributeProto::INT);
            to->set_i(castTo);
        }
        return out;
    }

private:
    SyntheticModel& m_model;
    uint64_t m_seed;
    int m_nextValue = 0;
};

void addValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
    const std::string& name, std::vector<int64_t> dims)
{
    auto* value = list->Add();
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : dims)
        tensor->mutable_shape()->add_dim()->set_dim_value(dim);
}

} // namespace

uint64_t SyntheticModel::totalBytes() const
{
    uint64_t total = 0;
    for (const auto& w : weights)
        total += w.bytes;
    return total;
}

SyntheticModel planLlmModel(const LlmShape& shape)
{
    SyntheticModel model;
    const int64_t d = chooseHidden(shape);
    const uint64_t vector = 4 * static_cast<uint64_t>(d);
    const uint64_t extrasBudget = std::min(shape.tensors * vector, shape.weightBytes / 2);
    const uint64_t layers
        = std::max<uint64_t>(1, (shape.weightBytes - extrasBudget) / layerBytes(d));
    const uint64_t natural = layers * 5 + 2;
    const uint64_t extras = shape.tensors > natural ? shape.tensors - natural : 0;
    model.layers = static_cast<int>(layers);
    model.hidden = d;

    auto& proto = model.proto;
    proto.set_ir_version(8);
    proto.set_producer_name("repack-genmodel");
    proto.set_producer_version("0.1.0");
    auto* opset = proto.add_opset_import();
    opset->set_domain("");
    opset->set_version(13);
    auto* graph = proto.mutable_graph();
    graph->set_name("synthetic_llm");
    addValue(graph->mutable_input(), "hidden_in", {1, d});

    Planner plan(model, shape.seed);
    constexpr auto F32 = dtype::Float;
    constexpr auto F16 = dtype::Float16;
    std::string h = "hidden_in";
    for (uint64_t i = 0; i < layers; ++i) {
        const std::string p = "layers." + std::to_string(i) + ".";
        const auto norm = plan.weight(p + "norm.weight", F32, {d});
        const auto up = plan.weight(p + "mlp.up.weight", F32, {d, kUpFactor * d});
        const auto upBias = plan.weight(p + "mlp.up.bias", F32, {kUpFactor * d});
        const auto down = plan.weight(p + "mlp.down.weight", F16, {kUpFactor * d, d});
        const auto downBias = plan.weight(p + "mlp.down.bias", F32, {d});
        auto x = plan.node("Mul", {h, norm});
        x = plan.node("Add", {plan.node("MatMul", {x, up}), upBias});
        x = plan.node("MatMul", {x, plan.node("Cast", {down}, onnx::TensorProto::FLOAT)});
        x = plan.node("Add", {x, downBias});
        // Extras spread evenly over the layers, as adapter biases.
        const uint64_t mine = extras / layers + (i < extras % layers ? 1 : 0);
        for (uint64_t k = 0; k < mine; ++k)
            x = plan.node(
                "Add", {x, plan.weight(p + "adapter." + std::to_string(k) + ".bias", F32, {d})});
        h = plan.node("Add", {h, x});
    }
    const auto finalNorm = plan.weight("final_norm.weight", F32, {d});
    const uint64_t used = model.totalBytes();
    const uint64_t left = shape.weightBytes > used ? shape.weightBytes - used : 0;
    const int64_t vocab = std::max<int64_t>(1, static_cast<int64_t>(left / (2 * d)));
    const auto head = plan.weight("lm_head.weight", F16, {d, vocab});
    h = plan.node("Mul", {h, finalNorm});
    plan.node("MatMul", {h, plan.node("Cast", {head}, onnx::TensorProto::FLOAT)}, 0, "logits");
    addValue(graph->mutable_output(), "logits", {1, vocab});
    return model;
}

} // namespace repack::bench
