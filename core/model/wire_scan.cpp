#include "wire_scan.h"

#include "tensor_messages.h"
#include "wire_reader.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <utility>

namespace repack {
namespace {

using wire::Child;
using wire::childOf;
using wire::Kind;
using MP = onnx::ModelProto;
using GP = onnx::GraphProto;
using TP = onnx::TensorProto;

constexpr uint32_t kRawDataField = TP::kRawDataFieldNumber;
using wire::kMaxDepth;
constexpr size_t kNone = SIZE_MAX;

// Element counters of one message as protobuf sees it: a singular message field that appears
// twice is merged into one message, so its repeated children go on counting.
struct Counters {
    std::vector<std::pair<uint32_t, uint32_t>> seen; // field -> elements so far
    std::vector<std::pair<uint32_t, std::unique_ptr<Counters>>> singular;

    uint32_t take(uint32_t field)
    {
        for (auto& [f, n] : seen)
            if (f == field)
                return n++;
        seen.emplace_back(field, 1);
        return 0;
    }
    Counters& child(uint32_t field)
    {
        for (auto& [f, c] : singular)
            if (f == field)
                return *c;
        singular.emplace_back(field, std::make_unique<Counters>());
        return *singular.back().second;
    }
};

// What becomes of a field in the output.
enum class EditKind : uint8_t {
    Payload, // a raw_data payload replaced by `replacement`
    Child, // a child message that changes: Node `node`
    Drop, // left out (elided main graph elements; consecutive ones are one Drop)
    Keep, // copied as it is, with elided elements put back around it
};

// A field that changes or gets neighbours in the output.
struct Edit {
    uint64_t tagAt = 0; // bytes before this are copied as they are
    uint64_t tagEnd = 0;
    uint64_t valueBegin = 0; // after the length prefix
    uint64_t end = 0; // end of the field
    EditKind kind = EditKind::Keep;
    int node = -1; // EditKind::Child
    PayloadReplacement replacement; // EditKind::Payload
    // Elided elements of main field `list` (Scanner::m_main) put back: [insertFrom, insertMid)
    // before the field, [insertMid, insertTo) after it.
    size_t insertFrom = 0, insertMid = 0, insertTo = 0;
    uint8_t list = 0;

    static Edit of(const wire::Field& f, EditKind kind)
    {
        Edit e;
        e.tagAt = f.tagAt;
        e.tagEnd = f.tagEnd;
        e.valueBegin = f.begin;
        e.end = f.end;
        e.kind = kind;
        return e;
    }
};

// A message that changes: its new length and its changed fields in file order.
struct Node {
    uint64_t newSize = 0;
    std::vector<Edit> edits;
};

size_t varintSize(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

void appendVarint(std::string& out, uint64_t v)
{
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7f) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

// The repeated fields of the main graph whose elements may be left out, and their tags
// (length-delimited).
enum MainFieldId : uint8_t { kInitializers, kNodes, kMainFields };
constexpr uint8_t kMainTags[kMainFields]
    = {(GP::kInitializerFieldNumber << 3) | 2, (GP::kNodeFieldNumber << 3) | 2};

int mainFieldOf(uint32_t field)
{
    if (field == GP::kInitializerFieldNumber)
        return kInitializers;
    return field == GP::kNodeFieldNumber ? kNodes : -1;
}

// One of them while it is scanned or written.
struct MainField {
    ElidedList* elided = nullptr; // scanModel: where the elements left out go
    const ElidedList* restore = nullptr; // spliceModel: the elements put back
    std::vector<std::pair<uint64_t, uint64_t>> dropped; // field ranges left out, coalesced
    size_t nextEntry = 0; // of `restore`, the next to put back
    uint64_t nextPosition = 0; // the position of the next element written
};

// What the scan of one message gathers from its fields.
struct MessageScan {
    Node self; // its edits; kept when there are any
    int64_t growth = 0; // new size - old size
    size_t lastKept[kMainFields] = {kNone, kNone}; // the edit of the last element kept
};

class Scanner {
public:
    Scanner(std::span<const std::byte> file, const std::string& fileName, const PayloadRule& rule,
        bool recordPayloads)
        : m_data(reinterpret_cast<const unsigned char*>(file.data()))
        , m_size(file.size())
        , m_fileName(fileName)
        , m_rule(rule)
        , m_recordPayloads(recordPayloads)
    {
    }

    // Leaves out the main graph's elements `elide` selects, into `elided`.
    void elide(const ElideRule* rule, ElidedElements* elided)
    {
        m_elide = rule;
        m_main[kInitializers].elided = &elided->initializers;
        if (rule->nodes)
            m_main[kNodes].elided = &elided->nodes;
        // The nodes' tensors follow the initializers' and the sparse initializers' in the index.
        uint64_t counts[3] = {0, 0, 0}; // initializers, sparse initializers, nodes
        wire::Reader model(m_data, 0, m_size, 0);
        wire::Field f, g;
        while (model.next(f)) {
            if (f.type != wire::Len || f.number != MP::kGraphFieldNumber)
                continue;
            wire::Reader graph(m_data, f.begin, f.end, 1);
            while (graph.next(g)) {
                if (g.type != wire::Len)
                    continue;
                counts[0] += g.number == GP::kInitializerFieldNumber ? 1 : 0;
                counts[1] += g.number == GP::kSparseInitializerFieldNumber ? 1 : 0;
                counts[2] += g.number == GP::kNodeFieldNumber ? 1 : 0;
            }
        } // a malformed graph fails the walk
        m_nodeTensor = counts[0] + 2 * counts[1];
        elided->initializers.reserve(counts[0]);
        if (rule->nodes)
            elided->nodes.reserve(counts[2]);
    }
    // Puts `elided` back among the main graph's initializers and nodes.
    void restore(const ElidedElements* elided)
    {
        m_main[kInitializers].restore = &elided->initializers;
        m_main[kNodes].restore = &elided->nodes;
    }

    // Walks the whole model; the root's Node index, or -1 when nothing changes.
    Result<int> walk()
    {
        Counters root;
        int rootNode = -1;
        if (!message(Kind::Model, 0, m_size, root, 0, rootNode))
            return Error::corrupt(m_fileName
                + ": not a valid ONNX model (malformed or truncated protobuf): " + m_error);
        for (const MainField& main : m_main)
            if (main.restore && main.nextEntry != main.restore->size())
                return Error::internal(m_fileName
                    + ": internal error: " + std::to_string(main.restore->size() - main.nextEntry)
                    + " elements left out of the parsed model have no place to go back to");
        return rootNode;
    }

    uint64_t newSize(int node) const
    {
        return node < 0 ? m_size : m_nodes[static_cast<size_t>(node)].newSize;
    }

    // The output without the spliced payloads' bytes; `inserts` gets where each goes.
    void emit(int rootNode, std::string& out, std::vector<PayloadInsert>* inserts) const
    {
        if (rootNode < 0) {
            out.assign(reinterpret_cast<const char*>(m_data), m_size);
            return;
        }
        emit(rootNode, 0, m_size, out, inserts);
    }

    std::vector<RawPayload> takePayloads() { return std::move(m_payloads); }

    // The bytes of the elements left out, read from where they were dropped, in one
    // allocation per field.
    void copyElided() const
    {
        for (const MainField& main : m_main) {
            if (!main.elided || main.elided->empty())
                continue;
            std::string bytes;
            bytes.reserve(main.elided->notedBytes());
            for (const auto& [begin, end] : main.dropped) {
                wire::Reader reader(m_data, begin, end, 0);
                wire::Field f;
                while (reader.next(f))
                    bytes.append(reinterpret_cast<const char*>(m_data) + f.begin, f.end - f.begin);
            }
            main.elided->setBytes(std::move(bytes));
        }
    }

private:
    bool fail(const std::string& what, uint64_t at)
    {
        m_error = what + " at byte " + std::to_string(at);
        return false;
    }

    // Scans the message of `kind` in [begin, end). `node` becomes the index of its Node when
    // the skeleton changes it, -1 otherwise.
    bool message(Kind kind, uint64_t begin, uint64_t end, Counters& counters, int depth, int& node)
    {
        MessageScan scan;
        wire::Reader reader(m_data, begin, end, depth);
        wire::Field f;
        while (reader.next(f)) {
            if (f.type != wire::Len)
                continue; // copied as it is
            if (kind == Kind::Tensor && f.number == kRawDataField) {
                payload(f, scan);
                continue;
            }
            const Child child = childOf(kind, f.number);
            if (child.kind == Kind::None)
                continue; // copied as it is
            if (!childMessage(kind, child, f, counters, depth, scan))
                return false;
        }
        if (reader.failed()) {
            m_error = reader.error();
            return false;
        }
        if (kind == Kind::Graph && m_main[kInitializers].restore && isMainGraph()
            && !placeRest(begin, scan))
            return false;
        if (scan.self.edits.empty()) {
            node = -1;
            return true;
        }
        scan.self.newSize = static_cast<uint64_t>(static_cast<int64_t>(end - begin) + scan.growth);
        m_nodes.push_back(std::move(scan.self));
        node = static_cast<int>(m_nodes.size() - 1);
        return true;
    }

    // A tensor's raw_data in `f`: recorded, and replaced where the rule says so.
    void payload(const wire::Field& f, MessageScan& scan)
    {
        const uint64_t len = f.end - f.begin;
        const auto replacement
            = m_rule({reinterpret_cast<const std::byte*>(m_data) + f.begin, len});
        if (m_recordPayloads && (replacement || m_strippedPaths.count(m_path)))
            m_payloads.push_back({m_path, f.begin, len, replacement.has_value()});
        if (m_recordPayloads && replacement)
            m_strippedPaths.insert(m_path);
        if (replacement) {
            Edit edit = Edit::of(f, EditKind::Payload);
            edit.replacement = *replacement;
            scan.self.edits.push_back(edit);
            scan.growth += fieldSize(replacement->length) - oldFieldSize(f.tagEnd, f.end);
        }
    }

    // Scans the `child` message in field `f` of a message of `kind`, then leaves it out or
    // keeps it.
    bool childMessage(Kind kind, Child child, const wire::Field& f, Counters& counters, int depth,
        MessageScan& scan)
    {
        const uint32_t field = f.number;
        if (depth + 1 > kMaxDepth)
            return fail("messages nested deeper than " + std::to_string(kMaxDepth), f.tagAt);
        Counters fresh;
        Counters& childCounters = child.repeated ? fresh : counters.child(field);
        const uint32_t position = child.repeated ? counters.take(field) : 0;
        const int mainId = kind == Kind::Graph && isMainGraph() ? mainFieldOf(field) : -1;
        MainField* main = mainId >= 0 ? &m_main[static_cast<size_t>(mainId)] : nullptr;
        // Paths lead into the skeleton, where the elements left out are not counted.
        const uint32_t elidedBefore
            = main && main->elided ? static_cast<uint32_t>(main->elided->size()) : 0;
        m_path.push_back({field, position - elidedBefore});
        int childNode = -1;
        const bool ok = message(child.kind, f.begin, f.end, childCounters, depth + 1, childNode);
        m_path.pop_back();
        if (!ok)
            return false;
        if (main && main->elided && leaveOut(mainId, position, f, depth + 1, childNode)) {
            drop(*main, f, scan);
            return true;
        }
        return keep(mainId, main, f, childNode, scan);
    }

    // Leaves the main graph element in `f` out of the output: one Drop edit, and one dropped
    // range, covers consecutive ones.
    static void drop(MainField& main, const wire::Field& f, MessageScan& scan)
    {
        scan.growth -= static_cast<int64_t>(f.end - f.tagAt);
        auto& dropped = main.dropped;
        if (!dropped.empty() && dropped.back().second == f.tagAt)
            dropped.back().second = f.end;
        else
            dropped.emplace_back(f.tagAt, f.end);
        if (!scan.self.edits.empty() && scan.self.edits.back().kind == EditKind::Drop
            && scan.self.edits.back().end == f.tagAt)
            scan.self.edits.back().end = f.end;
        else
            scan.self.edits.push_back(Edit::of(f, EditKind::Drop));
    }

    // Keeps the child in `f` (of main field `mainId`, `main`, when it is one), with an edit
    // when its subtree changed (Node `childNode`) or elided elements go back before it.
    bool keep(int mainId, MainField* main, const wire::Field& f, int childNode, MessageScan& scan)
    {
        Edit edit = Edit::of(f, EditKind::Keep);
        if (childNode >= 0) {
            const uint64_t newLen = m_nodes[static_cast<size_t>(childNode)].newSize;
            edit.kind = EditKind::Child;
            edit.node = childNode;
            scan.growth += fieldSize(newLen) - oldFieldSize(f.tagEnd, f.end);
        }
        if (main && main->restore) {
            if (!placeBefore(static_cast<uint8_t>(mainId), edit, scan.growth))
                return false;
            scan.lastKept[mainId] = scan.self.edits.size();
            scan.self.edits.push_back(edit);
        } else if (edit.kind != EditKind::Keep) {
            scan.self.edits.push_back(edit);
        }
        return true;
    }

    // At the end of the main graph written back: the rest of the elided elements follow the
    // last one kept.
    bool placeRest(uint64_t begin, MessageScan& scan)
    {
        if (++m_mainGraphs > 1)
            return fail("the main graph given twice where it is written back", begin);
        for (uint8_t id = 0; id < kMainFields; ++id) {
            MainField& main = m_main[id];
            if (main.nextEntry == main.restore->size())
                continue;
            if (scan.lastKept[id] == kNone)
                return fail("no element to put the elided ones after", begin);
            Edit& edit = scan.self.edits[scan.lastKept[id]];
            edit.insertMid = main.nextEntry;
            for (; main.nextEntry < main.restore->size(); ++main.nextEntry, ++main.nextPosition) {
                if (main.restore->position(main.nextEntry) != main.nextPosition)
                    return fail("an elided element's position is out of order", begin);
                scan.growth += insertedSize(main, main.nextEntry);
            }
            edit.insertTo = main.nextEntry;
        }
        return true;
    }

    bool isMainGraph() const
    {
        return m_path.size() == 1 && m_path[0].field == MP::kGraphFieldNumber;
    }

    // Whether the main graph element at `position` of field `id`, the field `f` whose
    // subtree's Node is `childNode`, is left out; notes it when it is.
    bool leaveOut(int id, uint32_t position, const wire::Field& f, int depth, int childNode)
    {
        uint64_t first = position, count = 1;
        if (id == kNodes) { // every node counts, for the index of the next one's tensors
            first = m_nodeTensor;
            count = countTensors(Kind::Node, f.begin, f.end, depth);
            m_nodeTensor += count;
        }
        if (childNode >= 0 || position == 0)
            return false; // a payload stripped; or the first, the place the others go after
        for (uint64_t t = first; t < first + count; ++t)
            if (!m_elide->select(t))
                return false;
        return m_main[static_cast<size_t>(id)].elided->note(
            position, first, count, f.end - f.begin);
    }

    // How many tensors the index lists for the message of `kind` in [begin, end) (a node, an
    // attribute or a graph, which the walk already read): a singular tensor or sparse tensor
    // given twice is merged into one, a sparse tensor is two (values and indices), a singular
    // graph given twice is merged into one that holds both's.
    uint64_t countTensors(Kind kind, uint64_t begin, uint64_t end, int depth) const
    {
        wire::Reader reader(m_data, begin, end, depth);
        wire::Field f;
        uint64_t count = 0;
        bool tensor = false, sparse = false;
        while (reader.next(f)) {
            if (f.type != wire::Len)
                continue;
            const Child child = childOf(kind, f.number);
            switch (child.kind) {
            case Kind::Tensor:
                count += child.repeated ? 1 : 0;
                tensor |= !child.repeated;
                break;
            case Kind::Sparse:
                count += child.repeated ? 2 : 0;
                sparse |= !child.repeated;
                break;
            case Kind::Node:
            case Kind::Attribute:
            case Kind::Graph:
                count += countTensors(child.kind, f.begin, f.end, depth + 1);
                break;
            default:
                break;
            }
        }
        return count + (tensor ? 1 : 0) + (sparse ? 2 : 0);
    }

    // Bytes elided element `entry` of `main` takes in the output, as a field of the graph.
    static int64_t insertedSize(const MainField& main, size_t entry)
    {
        return 1 + fieldSize(main.restore->bytes(entry).size());
    }

    // The elided elements of main field `id` that come before the one kept in `edit`.
    bool placeBefore(uint8_t id, Edit& edit, int64_t& growth)
    {
        MainField& main = m_main[id];
        edit.list = id;
        edit.insertFrom = main.nextEntry;
        for (; main.nextEntry < main.restore->size()
             && main.restore->position(main.nextEntry) == main.nextPosition;
             ++main.nextEntry, ++main.nextPosition)
            growth += insertedSize(main, main.nextEntry);
        if (main.nextEntry < main.restore->size()
            && main.restore->position(main.nextEntry) < main.nextPosition)
            return fail("an elided element's position is out of order", edit.tagAt);
        edit.insertMid = edit.insertTo = main.nextEntry;
        ++main.nextPosition; // the one kept
        return true;
    }

    void appendInserted(std::string& out, uint8_t id, size_t from, size_t to) const
    {
        for (size_t i = from; i < to; ++i) {
            const auto bytes = m_main[id].restore->bytes(i);
            out.push_back(static_cast<char>(kMainTags[id]));
            appendVarint(out, bytes.size());
            out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        }
    }

    // A length-delimited value of `len` bytes with its length prefix as the output writes it:
    // minimal (the tag is unchanged).
    static int64_t fieldSize(uint64_t len) { return static_cast<int64_t>(varintSize(len) + len); }
    // The same for a field of the input: its prefix as written, which protobuf accepts padded
    // past its minimal width (0x85 0x00 for 5), so not varintSize(len).
    static int64_t oldFieldSize(uint64_t tagEnd, uint64_t fieldEnd)
    {
        return static_cast<int64_t>(fieldEnd - tagEnd);
    }

    void emit(int node, uint64_t begin, uint64_t end, std::string& out,
        std::vector<PayloadInsert>* inserts) const
    {
        const char* data = reinterpret_cast<const char*>(m_data);
        uint64_t pos = begin;
        for (const Edit& e : m_nodes[static_cast<size_t>(node)].edits) {
            out.append(data + pos, e.tagAt - pos);
            pos = e.end;
            if (e.kind == EditKind::Drop)
                continue;
            appendInserted(out, e.list, e.insertFrom, e.insertMid);
            out.append(data + e.tagAt, e.tagEnd - e.tagAt);
            switch (e.kind) {
            case EditKind::Payload:
                appendVarint(out, e.replacement.length);
                if (e.replacement.length > 0 && inserts)
                    inserts->push_back({out.size(), e.replacement.id});
                break;
            case EditKind::Child:
                appendVarint(out, m_nodes[static_cast<size_t>(e.node)].newSize);
                emit(e.node, e.valueBegin, e.end, out, inserts);
                break;
            case EditKind::Keep:
                out.append(data + e.tagEnd, e.end - e.tagEnd);
                break;
            case EditKind::Drop:
                break;
            }
            appendInserted(out, e.list, e.insertMid, e.insertTo);
        }
        out.append(data + pos, end - pos);
    }

    const unsigned char* m_data;
    uint64_t m_size;
    const std::string& m_fileName;
    const PayloadRule& m_rule;
    bool m_recordPayloads;
    std::vector<Node> m_nodes;
    std::vector<WireStep> m_path;
    std::vector<RawPayload> m_payloads;
    // Tensors with a stripped payload: a later payload of theirs is recorded even when it stays.
    std::set<std::vector<WireStep>> m_strippedPaths;
    std::string m_error;
    // Eliding (scanModel) or putting back (spliceModel) main graph elements.
    const ElideRule* m_elide = nullptr;
    MainField m_main[kMainFields];
    uint64_t m_nodeTensor = 0; // the index of the next main graph node's first tensor
    int m_mainGraphs = 0;
};

} // namespace

std::optional<size_t> ElidedList::findTensor(uint64_t tensor) const
{
    // The last entry starting at or before `tensor` (entries of no tensors share their start
    // with the next).
    size_t low = 0, high = m_entries.size();
    while (low < high) {
        const size_t mid = low + (high - low) / 2;
        if (firstTensor(mid) <= tensor)
            low = mid + 1;
        else
            high = mid;
    }
    if (low == 0 || tensor >= firstTensor(low - 1) + tensorCount(low - 1))
        return std::nullopt;
    return low - 1;
}

void ElidedList::add(
    uint64_t position, uint64_t firstTensor, uint64_t tensors, std::span<const std::byte> bytes)
{
    if (note(position, firstTensor, tensors, bytes.size()))
        m_bytes.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

bool ElidedList::note(uint64_t position, uint64_t firstTensor, uint64_t tensors, uint64_t length)
{
    constexpr uint64_t kMax = std::numeric_limits<uint32_t>::max();
    if (position > kMax || firstTensor + tensors > kMax || m_noted + length > kMax)
        return false;
    if (!m_ownTensors && (firstTensor != position || tensors != 1))
        return false; // an initializer is the tensor at its position
    m_entries.push_back({static_cast<uint32_t>(position), static_cast<uint32_t>(m_noted)});
    if (m_ownTensors)
        m_tensors.push_back({static_cast<uint32_t>(firstTensor), static_cast<uint32_t>(tensors)});
    m_noted += length;
    return true;
}

void ElidedList::clear()
{
    std::string().swap(m_bytes);
    std::vector<Entry>().swap(m_entries);
    std::vector<Tensors>().swap(m_tensors);
    m_noted = 0;
}

uint64_t ElidedElements::tensorCount() const
{
    uint64_t count = initializers.size();
    for (size_t e = 0; e < nodes.size(); ++e)
        count += nodes.tensorCount(e);
    return count;
}

Result<WireScan> scanModel(std::span<const std::byte> file, const std::string& fileName,
    uint64_t minStrippedBytes, const ElideRule& elide)
{
    const PayloadRule strip
        = [minStrippedBytes](
              std::span<const std::byte> payload) -> std::optional<PayloadReplacement> {
        if (payload.empty() || payload.size() < minStrippedBytes)
            return std::nullopt;
        return PayloadReplacement{};
    };
    WireScan scan;
    Scanner scanner(file, fileName, strip, true);
    if (elide.select)
        scanner.elide(&elide, &scan.elided);
    auto root = scanner.walk();
    if (!root)
        return root.error();
    scanner.copyElided();
    scan.changed = *root >= 0;
    if (scan.changed) {
        scan.skeleton.reserve(scanner.newSize(*root));
        scanner.emit(*root, scan.skeleton, nullptr);
    }
    scan.payloads = scanner.takePayloads();
    return scan;
}

Result<SplicedModel> spliceModel(std::span<const std::byte> serialized, const std::string& fileName,
    const PayloadRule& rule, const ElidedElements* elided)
{
    Scanner scanner(serialized, fileName, rule, false);
    if (elided && !elided->empty())
        scanner.restore(elided);
    auto root = scanner.walk();
    if (!root)
        return root.error();
    SplicedModel out;
    out.size = scanner.newSize(*root);
    out.bytes.reserve(serialized.size() + (elided ? elided->writtenBytes() : 0));
    scanner.emit(*root, out.bytes, &out.inserts);
    return out;
}

} // namespace repack
