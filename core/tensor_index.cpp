#include "tensor_index.h"

#include "dtype.h"
#include "external_reference.h"
#include "graph_build_inputs.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace repack {
namespace {

std::optional<uint64_t> elementCount(const onnx::TensorProto& t)
{
    if (std::any_of(t.dims().begin(), t.dims().end(), [](int64_t d) { return d < 0; }))
        return std::nullopt;
    // A zero dimension anywhere makes the tensor empty, however large the others are.
    if (std::any_of(t.dims().begin(), t.dims().end(), [](int64_t d) { return d == 0; }))
        return 0;
    uint64_t n = 1;
    for (int64_t d : t.dims()) {
        const auto u = static_cast<uint64_t>(d);
        if (u != 0 && n > std::numeric_limits<uint64_t>::max() / u)
            return std::nullopt;
        n *= u;
    }
    return n;
}

// Elements held by the typed repeated field that matches the dtype (complex: two per element,
// sub-byte types: one packed byte per int32).
uint64_t typedFieldCount(const onnx::TensorProto& t)
{
    return static_cast<uint64_t>(t.float_data_size() + t.int32_data_size() + t.int64_data_size()
        + t.double_data_size() + t.uint64_data_size() + t.string_data_size());
}

class Indexer {
public:
    Indexer(
        std::vector<TensorInfo>& out, std::vector<Problem>& problems, const InlineRanges& inFile)
        : m_out(out)
        , m_problems(problems)
        , m_inFile(inFile)
    {
    }

    void graph(onnx::GraphProto& g, const std::string& scope)
    {
        for (auto& init : *g.mutable_initializer())
            add(init, scope, TensorKind::Initializer, init.name());
        for (auto& sparse : *g.mutable_sparse_initializer())
            addSparse(sparse, scope, sparse.values().name());
        nodes(*g.mutable_node(), scope);
    }

    void nodes(
        google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodeList, const std::string& scope)
    {
        int index = 0;
        for (auto& node : nodeList) {
            const std::string label
                = node.name().empty() ? "#" + std::to_string(index) : node.name();
            for (auto& attr : *node.mutable_attribute())
                attribute(attr, scope, label);
            ++index;
        }
    }

private:
    void attribute(onnx::AttributeProto& attr, const std::string& scope, const std::string& label)
    {
        const std::string base = label + "." + attr.name();
        if (attr.has_t())
            add(*attr.mutable_t(), scope, TensorKind::Attribute, orName(attr.t().name(), base));
        for (int i = 0; i < attr.tensors_size(); ++i)
            add(*attr.mutable_tensors(i), scope, TensorKind::Attribute,
                orName(attr.tensors(i).name(), base + "[" + std::to_string(i) + "]"));
        if (attr.has_sparse_tensor())
            addSparse(*attr.mutable_sparse_tensor(), scope, base);
        for (int i = 0; i < attr.sparse_tensors_size(); ++i)
            addSparse(*attr.mutable_sparse_tensors(i), scope, base + "[" + std::to_string(i) + "]");
        const std::string sub = scope + "/" + label + "/" + attr.name();
        if (attr.has_g())
            graph(*attr.mutable_g(), sub);
        for (int i = 0; i < attr.graphs_size(); ++i)
            graph(*attr.mutable_graphs(i), sub + "[" + std::to_string(i) + "]");
    }

    static std::string orName(const std::string& own, const std::string& fallback)
    {
        return own.empty() ? fallback : own;
    }

    void addSparse(
        onnx::SparseTensorProto& sparse, const std::string& scope, const std::string& fallback)
    {
        const std::string name = orName(sparse.values().name(), fallback);
        add(*sparse.mutable_values(), scope, TensorKind::Sparse, name);
        add(*sparse.mutable_indices(), scope, TensorKind::Sparse,
            orName(sparse.indices().name(), name + ".indices"));
    }

    void problem(const TensorInfo& info, std::string_view code, std::string message,
        Severity severity = Severity::Error)
    {
        m_problems.push_back({severity, info.qualifiedName(), std::string(code),
            info.qualifiedName() + ": " + std::move(message)});
    }

    void add(onnx::TensorProto& t, const std::string& scope, TensorKind kind, std::string name)
    {
        TensorInfo info;
        info.name = std::move(name);
        info.scope = scope;
        info.kind = kind;
        info.dataType = t.data_type();
        info.shape.assign(t.dims().begin(), t.dims().end());
        info.proto = &t;
        info.elements = elementCount(t);

        const bool known = dtype::name(info.dataType).has_value() && info.dataType != 0;
        if (!known)
            problem(info, code::UnknownDtype, "unknown data type " + std::to_string(info.dataType),
                Severity::Warning);

        if (!info.elements) {
            const bool negative
                = std::any_of(t.dims().begin(), t.dims().end(), [](int64_t d) { return d < 0; });
            problem(info, negative ? code::BadDims : code::SizeOverflow,
                negative ? "negative dimension in shape"
                         : "element count of the shape overflows 64 bits");
        } else if (info.dataType == dtype::String) {
            uint64_t sum = 0;
            for (const auto& s : t.string_data())
                sum += s.size();
            info.bytes = sum;
        } else if (known) {
            info.bytes = dtype::byteSize(info.dataType, *info.elements);
            if (!info.bytes)
                problem(info, code::SizeOverflow, "byte size of the tensor overflows 64 bits");
        }

        if (t.data_location() == onnx::TensorProto::EXTERNAL) {
            info.storage = Storage::External;
            parseExternalKeys(info, m_problems);
        } else {
            info.storage = t.has_raw_data() ? Storage::Raw : Storage::Typed;
            if (auto it = m_inFile.find(&t); it != m_inFile.end() && info.storage == Storage::Raw)
                info.inlineRange = it->second;
            if (t.external_data_size() > 0)
                problem(info, code::ExternalDataIgnored,
                    "has external_data entries but data_location is not EXTERNAL; "
                    "they are ignored",
                    Severity::Warning);
            checkInlineSize(info);
        }
        info.hasError = false;
        m_out.push_back(std::move(info));
    }

    void checkInlineSize(TensorInfo& info)
    {
        const auto& t = *info.proto;
        if (!info.bytes || info.dataType == dtype::String)
            return;
        if (info.storage == Storage::Raw) {
            const uint64_t held = info.inlineRange ? info.inlineRange->length : t.raw_data().size();
            if (held != *info.bytes)
                problem(info, code::InlineSizeMismatch,
                    "raw_data holds " + std::to_string(held) + " bytes, dtype x shape needs "
                        + std::to_string(*info.bytes));
            return;
        }
        const uint64_t count = typedFieldCount(t);
        if (count == 0 && *info.elements == 0)
            return;
        const int bits = dtype::bitsPerElement(info.dataType);
        uint64_t expected = *info.elements;
        if (info.dataType == dtype::Complex64 || info.dataType == dtype::Complex128)
            expected *= 2;
        else if (bits < 8)
            expected = *info.bytes;
        if (count != expected)
            problem(info, code::InlineSizeMismatch,
                "typed data holds " + std::to_string(count) + " values, dtype x shape needs "
                    + std::to_string(expected));
    }

    std::vector<TensorInfo>& m_out;
    std::vector<Problem>& m_problems;
    const InlineRanges& m_inFile;
};

// Tensors of one scope sharing a name: onnx.checker rejects two initializers (or sparse
// initializers) of one name in a graph, so that is an error; attribute tensors may repeat a
// name for onnx, but diffs and plans match tensors by scope and name, so that is a warning.
void reportDuplicateNames(const std::vector<TensorInfo>& tensors, std::vector<Problem>& problems)
{
    std::unordered_map<std::string, std::vector<const TensorInfo*>> byName;
    for (const auto& t : tensors)
        byName[t.qualifiedName()].push_back(&t);
    for (const auto& t : tensors) {
        const auto& same = byName[t.qualifiedName()];
        if (same.size() < 2 || same.front() != &t)
            continue;
        const auto values = std::count_if(same.begin(), same.end(),
            [](const TensorInfo* s) { return s->kind != TensorKind::Attribute; });
        const bool invalid = values >= 2;
        problems.push_back({invalid ? Severity::Error : Severity::Warning, t.qualifiedName(),
            std::string(code::DuplicateName),
            t.qualifiedName() + ": " + std::to_string(same.size()) + " tensors of scope '" + t.scope
                + "' are named '" + t.name + "'"
                + (invalid ? "; onnx.checker rejects duplicate initializer names"
                           : "; diffs and plan files cannot tell them apart")
                + "; fix: rename all but one"});
    }
}

} // namespace

std::vector<TensorInfo> indexTensors(
    onnx::ModelProto& model, std::vector<Problem>& problems, const InlineRanges& inFile)
{
    std::vector<TensorInfo> out;
    // Most tensors are the main graph's initializers: one allocation, not ~17 regrowths each
    // holding two copies of the index (40 MB at 100,000 tensors).
    if (model.has_graph())
        out.reserve(static_cast<size_t>(
            model.graph().initializer_size() + model.graph().sparse_initializer_size()));
    Indexer indexer(out, problems, inFile);
    if (model.has_graph())
        indexer.graph(*model.mutable_graph(), "graph");
    for (auto& function : *model.mutable_functions())
        indexer.nodes(
            *function.mutable_node(), "function:" + function.domain() + ":" + function.name());
    markGraphBuildInputs(model, out);
    reportDuplicateNames(out, problems);
    return out;
}

std::string_view kindName(TensorKind kind)
{
    switch (kind) {
    case TensorKind::Initializer:
        return "initializer";
    case TensorKind::Attribute:
        return "attribute";
    case TensorKind::Sparse:
        return "sparse";
    }
    return "initializer";
}

std::string_view storageName(Storage storage)
{
    switch (storage) {
    case Storage::Raw:
        return "raw";
    case Storage::Typed:
        return "typed";
    case Storage::External:
        return "external";
    }
    return "raw";
}

} // namespace repack
