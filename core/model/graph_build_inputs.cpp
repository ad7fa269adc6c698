#include "graph_build_inputs.h"

#include "core/radix_sort.h"

#include <algorithm>
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

std::string label(std::string_view opType, std::string_view name, int index)
{
    return std::string(opType) + " "
        + (name.empty() ? "#" + std::to_string(index) : "'" + std::string(name) + "'");
}

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

void GraphBuildMarker::sparseInitializer(std::string_view name, size_t values, size_t indices)
{
    m_scopes.back().names.push_back(entry(name, values));
    m_sparseIndices.emplace(values, indices);
}

void GraphBuildMarker::node(std::string_view domain, std::string_view opType, std::string_view name,
    int index, std::span<const std::string_view> inputs)
{
    for (int input : graphBuildInputs(domain, opType)) {
        if (static_cast<size_t>(input) >= inputs.size()
            || inputs[static_cast<size_t>(input)].empty())
            continue;
        const std::string_view wanted = inputs[static_cast<size_t>(input)];
        for (auto scope = m_scopes.rbegin(); scope != m_scopes.rend(); ++scope)
            if (auto tensor = lookup(*scope, wanted)) {
                mark(*tensor,
                    "input " + std::to_string(input) + " of " + label(opType, name, index));
                break;
            }
    }
}

std::optional<size_t> GraphBuildMarker::lookup(Scope& scope, std::string_view name)
{
    if (auto it = scope.constants.find(name); it != scope.constants.end())
        return it->second;
    auto byHash = [](const NameEntry& a, const NameEntry& b) { return a.hash < b.hash; };
    if (!scope.sorted) {
        radixSortBy(scope.names, [](const NameEntry& e) { return e.hash; });
        scope.sorted = true;
    }
    auto [it, end]
        = std::equal_range(scope.names.begin(), scope.names.end(), entry(name, 0), byHash);
    for (; it != end; ++it)
        if (m_tensors[it->tensor].name == name)
            return it->tensor;
    return std::nullopt;
}

void GraphBuildMarker::constantOfShapeValue(
    std::string_view opType, std::string_view name, int index, size_t tensor)
{
    mark(tensor, "the value attribute of " + label(opType, name, index));
}

void GraphBuildMarker::mark(size_t tensor, const std::string& why)
{
    // A reader densifies a sparse pair: both are read. The first use in declaration order
    // names the reason.
    for (size_t t : {tensor, m_sparseIndices.count(tensor) ? m_sparseIndices.at(tensor) : tensor})
        if (m_tensors[t].readAtGraphBuild->empty())
            m_tensors[t].readAtGraphBuild = why;
}

} // namespace repack
