// Tensors whose values readers need while they build the graph (SPEC 5c): ONNX shape
// inference reads the values of some inputs (Reshape's shape, Slice's starts, a Pad's pads, ...)
// and refuses external ones: ONNX Runtime fails to load such a model with "Cannot parse data from
// external tensors" and so does onnx.shape_inference. Those tensors must stay inline, whatever
// the threshold or plan. The op and input list, and where it comes from: docs/targets.md.
#pragma once

#include "name_hash.h"
#include "tensor_info.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace repack {

// The inputs of an operator (ai.onnx, or ONNX Runtime's com.microsoft) whose values readers read
// while building the graph, by index; empty for other operators.
std::span<const int> graphBuildInputs(std::string_view domain, std::string_view opType);

// Sets TensorInfo::readAtGraphBuild while core/model/tensor_index.cpp walks a model, for every
// tensor such an input reads: an initializer of the graph or of an enclosing graph (subgraphs
// read outer-scope names), or a Constant node's value, at any depth and in functions; and every
// ConstantOfShape's `value` attribute. Tensors are named by their position in `tensors`, whose
// names must be the initializers' own; other names are views into the bytes being walked,
// which outlive the marker.
class GraphBuildMarker {
public:
    explicit GraphBuildMarker(std::vector<TensorInfo>& tensors)
        : m_tensors(tensors)
    {
    }

    // A graph's (or function's) names, innermost last: a subgraph's own names shadow outer ones.
    void enterGraph() { m_scopes.emplace_back(); }
    void leaveGraph() { m_scopes.pop_back(); }
    // Room for `count` initializers of the current graph, taken at once.
    void reserveInitializers(size_t count) { m_scopes.back().names.reserve(count); }
    // An initializer, or a sparse initializer's values with their indices (read together).
    void initializer(std::string_view name, size_t tensor)
    {
        m_scopes.back().names.push_back(entry(name, tensor));
    }
    void sparseInitializer(std::string_view name, size_t values, size_t indices);
    // A Constant node's `value` tensor, under the node's first output name.
    void constant(std::string_view output, size_t tensor)
    {
        m_scopes.back().constants[output] = tensor;
    }

    // A node of the current graph: marks the inputs its operator reads while the graph is built
    // (`index` is its position, for a label when it has no name).
    void node(std::string_view domain, std::string_view opType, std::string_view name, int index,
        std::span<const std::string_view> inputs);
    // A ConstantOfShape's `value` attribute tensor.
    void constantOfShapeValue(
        std::string_view opType, std::string_view name, int index, size_t tensor);

private:
    // The names of one graph: its initializers by the hash of their name (the first of a name
    // counts; sorted once, when its nodes start looking names up; names are compared in
    // `tensors`, so the walked bytes are not read again), then the Constant nodes' outputs,
    // which replace any value of their name.
    // A name's hash cut to 32 bits (names are compared when hashes match) and a tensor's
    // position: 8 bytes, as a model of millions of initializers holds one per tensor.
    struct NameEntry {
        uint32_t hash = 0;
        uint32_t tensor = 0;
    };
    static NameEntry entry(std::string_view name, size_t tensor)
    {
        return {nameHash(name), static_cast<uint32_t>(tensor)}; // fewer than 2^32 tensors fit
    }
    struct Scope {
        std::vector<NameEntry> names;
        bool sorted = false;
        std::unordered_map<std::string_view, size_t> constants;
    };
    std::optional<size_t> lookup(Scope& scope, std::string_view name);
    void mark(size_t tensor, const std::string& why);

    std::vector<TensorInfo>& m_tensors;
    std::vector<Scope> m_scopes;
    std::unordered_map<size_t, size_t> m_sparseIndices; // values -> indices
};

} // namespace repack
