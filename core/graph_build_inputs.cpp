#include "graph_build_inputs.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>

namespace repack {
namespace {

// ai.onnx: from the type and shape inference functions of onnx/defs (every opset version) that
// read an input's values (getInputData), each checked against ONNX Runtime 1.30: with only that
// input external the model fails to load. Inputs an older opset lacks do not match there.
// com.microsoft: ONNX Runtime's contrib ops that failed the same way. docs/targets.md has the
// table with its sources.
using Table = std::unordered_map<std::string_view, std::vector<int>>;

const Table& standardOps()
{
    static const Table ops{
        {"Reshape", {1}},
        {"Expand", {1}},
        {"ConstantOfShape", {0}},
        {"Tile", {1}},
        {"Pad", {1, 3}}, // pads, axes (18+)
        {"Slice", {1, 2, 3, 4}}, // starts, ends, axes, steps (10+)
        {"Squeeze", {1}},
        {"Unsqueeze", {1}},
        {"Split", {1}},
        {"SplitToSequence", {1}},
        {"ReduceSum", {1}},
        {"ReduceMean", {1}},
        {"ReduceMax", {1}},
        {"ReduceMin", {1}},
        {"ReduceProd", {1}},
        {"ReduceL1", {1}},
        {"ReduceL2", {1}},
        {"ReduceLogSum", {1}},
        {"ReduceLogSumExp", {1}},
        {"ReduceSumSquare", {1}},
        {"TopK", {1}},
        {"Range", {0, 1, 2}},
        {"Upsample", {1}},
        {"Resize", {1, 2, 3}}, // scales (10), scales and sizes (11+)
        {"OneHot", {1}},
        {"CenterCropPad", {1}},
        {"Col2Im", {1, 2}},
        {"AffineGrid", {1}},
        {"DFT", {1, 2}},
        {"STFT", {1, 3}},
        {"HannWindow", {0}},
        {"HammingWindow", {0}},
        {"BlackmanWindow", {0}},
        {"MelWeightMatrix", {0, 1}},
    };
    return ops;
}

const Table& microsoftOps()
{
    static const Table ops{
        {"ExpandDims", {1}},
        {"ConvTransposeWithDynamicPads", {2}},
        {"GroupQueryAttention", {6}},
        {"Range", {0, 1, 2}},
        {"BeamSearch", {1, 3, 4}}, // from the sources only: they need decoder subgraphs
        {"GreedySearch", {1}},
    };
    return ops;
}

using Names = std::unordered_map<std::string, const onnx::TensorProto*>;
using Indices = std::unordered_map<const onnx::TensorProto*, size_t>;

class Marker {
public:
    Marker(const Indices& indices, std::vector<TensorInfo>& tensors)
        : m_indices(indices)
        , m_tensors(tensors)
    {
    }

    void graph(const onnx::GraphProto& g)
    {
        Names names;
        for (const auto& init : g.initializer())
            names.emplace(init.name(), &init);
        for (const auto& sparse : g.sparse_initializer()) {
            names.emplace(sparse.values().name(), &sparse.values());
            m_sparseIndices.emplace(&sparse.values(), &sparse.indices());
        }
        nodes(g.node(), std::move(names));
    }

    void nodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& list, Names names)
    {
        m_scopes.push_back(std::move(names));
        int index = 0;
        for (const auto& node : list) {
            const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
            for (const auto& attr : node.attribute()) {
                if (attr.has_g())
                    graph(attr.g());
                for (const auto& sub : attr.graphs())
                    graph(sub);
                if (standard && node.op_type() == "Constant" && attr.name() == "value"
                    && attr.has_t() && node.output_size() > 0)
                    m_scopes.back()[node.output(0)] = &attr.t();
                if (standard && node.op_type() == "ConstantOfShape" && attr.name() == "value"
                    && attr.has_t())
                    mark(&attr.t(), "the value attribute of " + label(node, index));
            }
            for (int input : graphBuildInputs(node.domain(), node.op_type()))
                if (input < node.input_size() && !node.input(input).empty())
                    if (const auto* t = lookup(node.input(input)))
                        mark(t, "input " + std::to_string(input) + " of " + label(node, index));
            ++index;
        }
        m_scopes.pop_back();
    }

private:
    static std::string label(const onnx::NodeProto& node, int index)
    {
        return node.op_type() + " "
            + (node.name().empty() ? "#" + std::to_string(index) : "'" + node.name() + "'");
    }

    // The innermost graph's value of that name: a subgraph's own names shadow outer ones.
    const onnx::TensorProto* lookup(const std::string& name) const
    {
        for (auto scope = m_scopes.rbegin(); scope != m_scopes.rend(); ++scope)
            if (auto it = scope->find(name); it != scope->end())
                return it->second;
        return nullptr;
    }

    void mark(const onnx::TensorProto* proto, const std::string& why)
    {
        markOne(proto, why);
        if (auto it = m_sparseIndices.find(proto); it != m_sparseIndices.end())
            markOne(it->second, why); // a reader densifies the pair: both are read
    }

    void markOne(const onnx::TensorProto* proto, const std::string& why)
    {
        auto it = m_indices.find(proto);
        if (it == m_indices.end())
            return;
        std::string& reason = m_tensors[it->second].readAtGraphBuild;
        if (reason.empty())
            reason = why; // the first use read in declaration order names it
    }

    const Indices& m_indices;
    std::vector<TensorInfo>& m_tensors;
    std::vector<Names> m_scopes;
    std::unordered_map<const onnx::TensorProto*, const onnx::TensorProto*> m_sparseIndices;
};

} // namespace

std::span<const int> graphBuildInputs(std::string_view domain, std::string_view opType)
{
    const Table* ops = domain.empty() || domain == "ai.onnx" ? &standardOps()
        : domain == "com.microsoft"                          ? &microsoftOps()
                                                             : nullptr;
    if (!ops)
        return {};
    auto it = ops->find(opType);
    return it == ops->end() ? std::span<const int>() : std::span<const int>(it->second);
}

void markGraphBuildInputs(const onnx::ModelProto& model, std::vector<TensorInfo>& tensors)
{
    Indices indices;
    indices.reserve(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i)
        indices.emplace(tensors[i].proto, i);
    Marker marker(indices, tensors);
    if (model.has_graph())
        marker.graph(model.graph());
    for (const auto& function : model.functions())
        marker.nodes(function.node(), {});
}

} // namespace repack
