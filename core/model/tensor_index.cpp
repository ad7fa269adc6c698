#include "tensor_index.h"

#include "duplicate_names.h"
#include "external_reference.h"
#include "graph_build_inputs.h"
#include "name_hash.h"
#include "tensor_fields.h"
#include "wire_reader.h"

#include "core/radix_sort.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <limits>
#include <set>

namespace repack {
namespace {

using wire::Field;
using wire::Reader;

// Where one occurrence of a message lies in the bytes. A singular message field given more
// than once is one message to protobuf: its occurrences, read in order.
struct Span {
    uint64_t begin = 0;
    uint64_t end = 0;
};
using Spans = std::vector<Span>;
using SpanList = std::span<const Span>;

SpanList one(const Span& s)
{
    return {&s, 1};
}

using TP = onnx::TensorProto;
using GP = onnx::GraphProto;
using NP = onnx::NodeProto;
using AP = onnx::AttributeProto;
using SP = onnx::SparseTensorProto;
using MP = onnx::ModelProto;
using FP = onnx::FunctionProto;

std::string orName(std::string_view own, const std::string& fallback)
{
    return own.empty() ? fallback : std::string(own);
}

class Walker {
public:
    // With `locations`, the walk indexes nothing: it hands over each external tensor's
    // location and leaves `out` without tensors (externalLocations()).
    Walker(std::span<const std::byte> bytes, const RawPayloadRule& raw, const ReleaseRule& release,
        TensorIndex& out, const std::function<void(const std::string&)>* locations = nullptr)
        : m_data(reinterpret_cast<const unsigned char*>(bytes.data()))
        , m_size(bytes.size())
        , m_raw(raw)
        , m_out(out)
        , m_marker(out.tensors)
        , m_release(release)
        , m_locations(locations)
    {
    }

    bool model()
    {
        Reader r(m_data, 0, m_size);
        Spans graph;
        Spans functions;
        Field f;
        while (r.next(f)) {
            switch (f.number) {
            case MP::kIrVersionFieldNumber:
                if (f.type == wire::Varint)
                    m_out.header.irVersion = static_cast<int64_t>(f.varint);
                break;
            case MP::kProducerNameFieldNumber:
                if (f.type == wire::Len)
                    m_out.header.producerName = r.text(f);
                break;
            case MP::kProducerVersionFieldNumber:
                if (f.type == wire::Len)
                    m_out.header.producerVersion = r.text(f);
                break;
            case MP::kOpsetImportFieldNumber:
                if (f.type == wire::Len && !opset(r, f))
                    return fail(r);
                break;
            case MP::kGraphFieldNumber:
                if (f.type == wire::Len)
                    graph.push_back({f.begin, f.end});
                break;
            case MP::kFunctionsFieldNumber:
                if (f.type == wire::Len)
                    functions.push_back({f.begin, f.end});
                break;
            }
        }
        if (r.failed())
            return fail(r);
        m_out.hasGraph = !graph.empty();
        m_out.functionCount = functions.size();
        if (!graph.empty() && !this->graph(graph, 1, SharedString("graph"), &m_mainGraphHasNodes))
            return false;
        for (const Span& function : functions)
            if (!this->function(function))
                return false;
        markUnusedInitializers();
        return true;
    }

    const std::string& error() const { return m_error; }

private:
    bool fail(const Reader& r)
    {
        if (m_error.empty())
            m_error = r.error();
        return false;
    }

    bool opset(Reader& parent, const Field& field)
    {
        Reader r(m_data, 0, 0);
        if (!parent.nested(field, r))
            return false;
        std::string domain;
        int64_t version = 0;
        Field f;
        while (r.next(f)) {
            if (f.number == onnx::OperatorSetIdProto::kDomainFieldNumber && f.type == wire::Len)
                domain = r.text(f);
            else if (f.number == onnx::OperatorSetIdProto::kVersionFieldNumber
                && f.type == wire::Varint)
                version = static_cast<int64_t>(f.varint);
        }
        if (!parent.adopt(r))
            return false;
        m_out.header.opsets.emplace_back(std::move(domain), version);
        return true;
    }

    // Runs `each` over the fields of every occurrence of a message at nesting `depth`.
    template <typename Each> bool fields(SpanList spans, int depth, Each&& each)
    {
        if (depth > wire::kMaxDepth) {
            m_error = "messages nested deeper than " + std::to_string(wire::kMaxDepth) + " at byte "
                + std::to_string(spans.empty() ? 0 : spans.front().begin);
            return false;
        }
        for (const Span& span : spans) {
            Reader r(m_data, span.begin, span.end, depth);
            Field f;
            while (r.next(f))
                if (!each(r, f))
                    return fail(r);
            if (r.failed())
                return fail(r);
        }
        return true;
    }

    bool graph(SpanList spans, int depth, const SharedString& scope, bool* hasNodes = nullptr)
    {
        Spans sparse;
        // Per occurrence of the graph, from its first node's tag to its last node's end: the
        // nodes are walked after the graph's tensors, in a pass over these ranges alone (the
        // nodes of a file protobuf wrote come before its initializers; a pass over all of the
        // graph would read the initializers' pages again).
        Spans nodeRanges;
        Span nodesIn;
        m_marker.enterGraph();
        // Most tensors are the main graph's initializers: one allocation for the index.
        if (depth == 1 && !reserveMainGraph(spans, depth))
            return false;
        Releaser released(*this, spans.empty() ? 0 : spans.front().begin, depth);
        // Initializers come first in the index, in order: read them as they come.
        const auto each = [&](Reader& r, const Field& f) {
            if (f.type != wire::Len)
                return true;
            switch (f.number) {
            case GP::kNodeFieldNumber:
                if (nodesIn.end == 0)
                    nodesIn.begin = f.tagAt;
                nodesIn.end = f.end;
                break;
            case GP::kInitializerFieldNumber: {
                const size_t index = m_out.tensors.size();
                const Span init{f.begin, f.end};
                if (!tensor(one(init), depth + 1, scope, TensorKind::Initializer, {}))
                    return false;
                if (!m_locations)
                    m_marker.initializer(m_lastName, index);
                break;
            }
            case GP::kSparseInitializerFieldNumber:
                sparse.push_back({f.begin, f.end});
                break;
            case GP::kOutputFieldNumber:
                return valueInfoName(r, f);
            }
            released.upTo(f.end);
            return true;
        };
        for (const Span& span : spans) {
            nodesIn = {};
            if (!fields(one(span), depth, each))
                return false;
            if (nodesIn.end != 0)
                nodeRanges.push_back(nodesIn);
        }
        released.finish();
        if (hasNodes)
            *hasNodes = !nodeRanges.empty();
        for (const Span& s : sparse)
            if (!sparseTensor(one(s), depth + 1, scope, {}, true))
                return false;
        const bool done = nodeList(nodeRanges, depth, GP::kNodeFieldNumber, scope);
        m_marker.leaveGraph();
        return done;
    }

    // Counts the main graph's initializers for one allocation of the index.
    bool reserveMainGraph(SpanList spans, int depth)
    {
        if (m_locations)
            return true; // nothing is indexed
        size_t count = 0;
        size_t nodes = 0;
        Releaser released(*this, spans.empty() ? 0 : spans.front().begin, depth);
        const bool ok = fields(spans, depth, [&](Reader&, const Field& f) {
            if (f.type == wire::Len && f.number == GP::kInitializerFieldNumber)
                ++count;
            else if (f.type == wire::Len && f.number == GP::kSparseInitializerFieldNumber)
                count += 2;
            else if (f.type == wire::Len && f.number == GP::kNodeFieldNumber)
                ++nodes;
            released.upTo(f.end);
            return true;
        });
        released.finish();
        // Room for a tensor per node too (a model of Constant nodes holds one in each): a
        // reservation is address space, not memory, until it is filled, and spares the index
        // a doubling that holds its old and new buffers at once.
        m_out.tensors.reserve(count + nodes);
        m_marker.reserveInitializers(count);
        // Node inputs and graph outputs: most models name each initializer once or twice and
        // each node output once or twice. Room for four names per initializer and node is
        // address space, not memory (pages are touched as they fill), and spares the doublings.
        m_used.reserve(4 * (count + nodes));
        return ok;
    }

    // Gives back to the system the pages of the main graph's bytes a walk has passed (the
    // caller's `release`): the file's pages do not all stay in memory at once. Pages read
    // again later come back from the page cache.
    class Releaser {
    public:
        Releaser(Walker& walker, uint64_t from, int depth)
            : m_walker(walker)
            , m_from(from)
            , m_to(from)
            , m_active(depth <= 1 && walker.m_release)
        {
        }
        void upTo(uint64_t pos)
        {
            m_to = std::max(m_to, pos);
            if (m_active && m_to >= m_from + kReleaseChunk)
                finish();
        }
        void finish()
        {
            if (m_active && m_to > m_from)
                m_walker.m_release(m_from, m_to - m_from);
            m_from = m_to;
        }

    private:
        static constexpr uint64_t kReleaseChunk = 1 << 20;
        Walker& m_walker;
        uint64_t m_from;
        uint64_t m_to;
        bool m_active;
    };

    // A graph output's name: a use of that name.
    bool valueInfoName(Reader& parent, const Field& field)
    {
        Reader r(m_data, 0, 0);
        if (!parent.nested(field, r))
            return false;
        std::string_view name;
        bool named = false;
        Field f;
        while (r.next(f))
            if (f.number == onnx::ValueInfoProto::kNameFieldNumber && f.type == wire::Len) {
                name = r.text(f);
                named = true;
            }
        if (named)
            m_used.push_back(nameHash(name));
        return parent.adopt(r);
    }

    bool function(const Span& span)
    {
        std::string_view name;
        std::string_view domain;
        const bool ok = fields(one(span), 1, [&](Reader& r, const Field& f) {
            if (f.type != wire::Len)
                return true;
            if (f.number == FP::kNameFieldNumber)
                name = r.text(f);
            else if (f.number == FP::kDomainFieldNumber)
                domain = r.text(f);
            return true;
        });
        if (!ok)
            return false;
        m_marker.enterGraph();
        const bool done = nodeList(one(span), 1, FP::kNodeFieldNumber,
            SharedString("function:" + std::string(domain) + ":" + std::string(name)));
        m_marker.leaveGraph();
        return done;
    }

    struct NodeFields {
        std::string_view name;
        std::string_view opType;
        std::string_view domain;
        std::string_view output0;
        bool hasOutput = false;
        Spans attributes;
    };

    // The nodes of the graph or function made of `spans` (its bytes, or ranges of them that
    // start at a field) at nesting `parentDepth`: its fields numbered `field`, read in a pass of
    // their own after its other fields, so that no list of a graph's nodes is kept (16 bytes a
    // node, 1.6 MB at 100,000 nodes).
    bool nodeList(SpanList spans, int parentDepth, uint32_t field, const SharedString& scope)
    {
        const int depth = parentDepth + 1;
        int index = 0;
        NodeFields node;
        Releaser released(*this, spans.empty() ? 0 : spans.front().begin, parentDepth);
        const bool walked = fields(spans, parentDepth, [&](Reader&, const Field& nodeField) {
            released.upTo(nodeField.begin);
            if (nodeField.type != wire::Len || nodeField.number != field)
                return true;
            const Span span{nodeField.begin, nodeField.end};
            node.name = node.opType = node.domain = node.output0 = {};
            node.hasOutput = false;
            node.attributes.clear();
            const bool ok = fields(one(span), depth, [&](Reader& r, const Field& f) {
                if (f.type != wire::Len)
                    return true;
                switch (f.number) {
                case NP::kNameFieldNumber:
                    node.name = r.text(f);
                    break;
                case NP::kOpTypeFieldNumber:
                    node.opType = r.text(f);
                    break;
                case NP::kDomainFieldNumber:
                    node.domain = r.text(f);
                    break;
                case NP::kOutputFieldNumber:
                    if (!node.hasOutput)
                        node.output0 = r.text(f);
                    node.hasOutput = true;
                    break;
                case NP::kAttributeFieldNumber:
                    node.attributes.push_back({f.begin, f.end});
                    break;
                }
                return true;
            });
            if (!ok)
                return false;
            const std::string label
                = node.name.empty() ? "#" + std::to_string(index) : std::string(node.name);
            for (const Span& attr : node.attributes)
                if (!attribute(attr, depth + 1, scope, label, node, index))
                    return false;
            // The inputs, read again now that the subgraphs are walked (m_inputs is shared).
            m_inputs.clear();
            fields(one(span), depth, [&](Reader& r, const Field& f) {
                if (f.number == NP::kInputFieldNumber && f.type == wire::Len)
                    m_inputs.push_back(r.text(f));
                return true;
            });
            if (!m_locations) {
                for (std::string_view input : m_inputs)
                    m_used.push_back(nameHash(input));
                m_marker.node(node.domain, node.opType, node.name, index, m_inputs);
            }
            ++index;
            released.upTo(span.end);
            return true;
        });
        if (!walked)
            return false;
        released.finish();
        return true;
    }

    bool attribute(const Span& span, int depth, const SharedString& scope, const std::string& label,
        const NodeFields& node, int nodeIndex)
    {
        std::string_view name;
        Spans t, g, sparse;
        Spans graphs, sparseList;
        size_t listed = 0; // fields of the `tensors` list: walked in a second pass, not kept
        const bool ok = fields(one(span), depth, [&](Reader& r, const Field& f) {
            if (f.type != wire::Len)
                return true;
            switch (f.number) {
            case AP::kNameFieldNumber:
                name = r.text(f);
                break;
            case AP::kTFieldNumber:
                t.push_back({f.begin, f.end});
                break;
            case AP::kGFieldNumber:
                g.push_back({f.begin, f.end});
                break;
            case AP::kTensorsFieldNumber:
                ++listed;
                break;
            case AP::kGraphsFieldNumber:
                graphs.push_back({f.begin, f.end});
                break;
            case AP::kSparseTensorFieldNumber:
                sparse.push_back({f.begin, f.end});
                break;
            case AP::kSparseTensorsFieldNumber:
                sparseList.push_back({f.begin, f.end});
                break;
            }
            return true;
        });
        if (!ok)
            return false;
        const std::string base = label + "." + std::string(name);
        std::optional<size_t> value;
        if (!t.empty()) {
            value = m_out.tensors.size();
            if (!tensor(t, depth + 1, scope, TensorKind::Attribute, base))
                return false;
        }
        // One allocation for a long list (millions of tensors in one attribute), not a
        // doubling vector whose old and new buffers are both resident while it moves; short
        // lists keep the geometric growth.
        if (const size_t needed = m_out.tensors.size() + listed;
            !m_locations && needed > m_out.tensors.capacity())
            m_out.tensors.reserve(std::max(needed, 2 * m_out.tensors.capacity()));
        if (listed) {
            size_t i = 0;
            const bool walked = fields(one(span), depth, [&](Reader&, const Field& f) {
                return f.type != wire::Len || f.number != AP::kTensorsFieldNumber
                    || tensor(one({f.begin, f.end}), depth + 1, scope, TensorKind::Attribute,
                        base + "[" + std::to_string(i++) + "]");
            });
            if (!walked)
                return false;
        }
        if (!sparse.empty() && !sparseTensor(sparse, depth + 1, scope, base, false))
            return false;
        for (size_t i = 0; i < sparseList.size(); ++i)
            if (!sparseTensor(one(sparseList[i]), depth + 1, scope,
                    base + "[" + std::to_string(i) + "]", false))
                return false;
        const std::string sub = scope + "/" + label + "/" + std::string(name);
        if (!g.empty() && !graph(g, depth + 1, SharedString(sub)))
            return false;
        for (size_t i = 0; i < graphs.size(); ++i)
            if (!graph(
                    one(graphs[i]), depth + 1, SharedString(sub + "[" + std::to_string(i) + "]")))
                return false;
        const bool standard = node.domain.empty() || node.domain == "ai.onnx";
        if (standard && value && name == "value" && !m_locations) {
            if (node.opType == "Constant" && node.hasOutput)
                m_marker.constant(node.output0, *value);
            if (node.opType == "ConstantOfShape")
                m_marker.constantOfShapeValue(node.opType, node.name, nodeIndex, *value);
        }
        return true;
    }

    // A sparse tensor's values and indices; `initializer`: of a graph (named for lookups).
    bool sparseTensor(SpanList spans, int depth, const SharedString& scope,
        const std::string& fallback, bool initializer)
    {
        Spans values, indices;
        const bool ok = fields(spans, depth, [&](Reader&, const Field& f) {
            if (f.type == wire::Len && f.number == SP::kValuesFieldNumber)
                values.push_back({f.begin, f.end});
            else if (f.type == wire::Len && f.number == SP::kIndicesFieldNumber)
                indices.push_back({f.begin, f.end});
            return true;
        });
        if (!ok)
            return false;
        // protobuf gives an absent values or indices message as an empty TensorProto.
        const size_t valuesIndex = m_out.tensors.size();
        if (!tensor(values, depth + 1, scope, TensorKind::Sparse, fallback))
            return false;
        const std::string_view valuesName = m_lastName;
        const std::string name = m_locations ? std::string() : m_out.tensors.back().name;
        if (!tensor(indices, depth + 1, scope, TensorKind::Sparse, name + ".indices"))
            return false;
        if (initializer && !m_locations)
            m_marker.sparseInitializer(valuesName, valuesIndex, valuesIndex + 1);
        return true;
    }

    // Reads the TensorProto made of `spans` and adds it to the index.
    bool tensor(SpanList spans, int depth, const SharedString& scope, TensorKind kind,
        const std::string& fallback)
    {
        m_fields.clear();
        if (!fields(spans, depth,
                [this](Reader& r, const Field& f) { return readTensorField(r, f, m_fields); }))
            return false;
        const TensorFields& t = m_fields;
        m_lastName = t.name;
        if (m_locations) {
            if (t.external) { // the keys read as for the index, problems left out
                TensorInfo scratch;
                std::vector<Problem> ignored;
                parseExternalKeys(scratch, {t.externalData, t.hasRaw || t.typedCount > 0},
                    m_dataLocations, ignored);
                if (scratch.external->hasLocation())
                    (*m_locations)(scratch.external->location());
            }
            return true;
        }
        TensorInfo info = describeTensor(t, orName(t.name, fallback), scope, kind, m_out.problems);

        const size_t position = m_out.tensors.size();
        if (t.external) {
            info.storage = Storage::External;
            parseExternalKeys(info, {t.externalData, t.hasRaw || t.typedCount > 0}, m_dataLocations,
                m_out.problems);
        } else {
            info.storage = t.hasRaw ? Storage::Raw : Storage::Typed;
            uint64_t held = t.raw.length;
            if (t.hasRaw) {
                info.inlineRange = m_raw ? m_raw(position, t.raw) : std::nullopt;
                if (info.inlineRange)
                    held = info.inlineRange->length;
            } else {
                std::vector<FileRange> ranges;
                for (const Span& s : spans)
                    ranges.push_back({s.begin, s.end - s.begin});
                m_out.typedSpans.emplace_back(position, std::move(ranges));
            }
            if (!t.externalData.empty())
                addProblem(m_out.problems, info, code::ExternalDataIgnored,
                    "has external_data entries but data_location is not EXTERNAL; "
                    "they are ignored",
                    Severity::Warning);
            checkInlineSize(info, held, t.typedCount, m_out.problems);
        }
        m_out.tensors.push_back(std::move(info));
        return true;
    }

    // Initializers no node input and no graph output names, when the main graph has nodes (a
    // graph without nodes is a weights container: nothing is meant to use them). Names are
    // compared by their 32-bit hashes: a collision at worst hides one warning. Both sides are
    // sorted by hash and walked together once.
    void markUnusedInitializers()
    {
        if (!m_mainGraphHasNodes)
            return;
        using HP = HashedPosition;
        std::vector<uint64_t> initializers;
        initializers.reserve(m_out.tensors.size());
        for (uint32_t i = 0; i < m_out.tensors.size(); ++i)
            if (m_out.tensors[i].kind == TensorKind::Initializer)
                initializers.push_back(HP::pack(nameHash(m_out.tensors[i].name), i));
        std::sort(initializers.begin(), initializers.end()); // in place, no second buffer
        radixSortBy(m_used, [](uint32_t hash) { return hash; });
        auto used = m_used.begin();
        for (uint64_t k : initializers) {
            while (used != m_used.end() && *used < HP::hash(k))
                ++used;
            m_out.tensors[HP::position(k)].unusedInitializer
                = used == m_used.end() || *used != HP::hash(k);
        }
        m_used = {}; // before the duplicate names are sorted
    }

    const unsigned char* m_data;
    uint64_t m_size;
    const RawPayloadRule& m_raw;
    TensorIndex& m_out;
    GraphBuildMarker m_marker;
    TensorFields m_fields; // of the tensor being read (tensors hold no tensors)
    std::string_view m_lastName; // the own name of the tensor read last
    DataLocations m_dataLocations; // shared by the external tensors naming each location
    std::vector<std::string_view> m_inputs; // of the node being finished
    std::vector<uint32_t> m_used; // nameHash of node inputs and graph outputs, every graph
    const ReleaseRule& m_release;
    const std::function<void(const std::string&)>* m_locations;
    bool m_mainGraphHasNodes = false;
    std::string m_error;
};

} // namespace

Result<TensorIndex> indexTensors(std::span<const std::byte> bytes, const std::string& fileName,
    const RawPayloadRule& raw, const ReleaseRule& release)
{
    TensorIndex index;
    Walker walker(bytes, raw, release, index);
    if (!walker.model())
        return Error::corrupt(fileName
            + ": not a valid ONNX model (malformed or truncated protobuf): " + walker.error());
    reportDuplicateNames(index.tensors, index.problems);
    return index;
}

Result<ExternalLocations> externalLocations(
    std::span<const std::byte> bytes, const std::string& fileName, const ReleaseRule& release)
{
    TensorIndex index;
    std::set<std::string> seen;
    const std::function<void(const std::string&)> collect
        = [&seen](const std::string& location) { seen.insert(location); };
    Walker walker(bytes, {}, release, index, &collect);
    if (!walker.model())
        return Error::corrupt(fileName
            + ": not a valid ONNX model (malformed or truncated protobuf): " + walker.error());
    return ExternalLocations{std::vector<std::string>(seen.begin(), seen.end()),
        index.hasGraph || index.functionCount > 0};
}

} // namespace repack
