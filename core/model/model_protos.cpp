// A loaded Model's protos: parsed from the .onnx on first use (a skeleton without the large
// raw_data payloads, which stay in the file until materializeInline()), with the main graph's
// initializers and nodes a save does not need left out as their serialization and parsed in
// later.
#include "model.h"

#include "core/mapped_memory.h"
#include "core/posix_file.h"
#include "model_start.h"
#include "structure_image.h"
#include "tensor_protos.h"
#include "wire_scan.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <limits>
#include <unordered_set>

namespace fs = std::filesystem;

namespace repack {

void Model::ProtoDeleter::operator()(onnx::ModelProto* proto) const
{
    if (proto && !proto->GetArena())
        delete proto; // an arena's messages go with the arena
}

namespace {

// The model parsed from the (skeleton) bytes `data`, allocated in `arena`.
Result<onnx::ModelProto*> parseModel(
    std::string_view data, const fs::path& path, google::protobuf::Arena& arena)
{
    if (data.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
        return Error::corrupt(path.string()
            + ": not a valid ONNX model (malformed or truncated protobuf): "
            + std::to_string(data.size()) + " bytes, past protobuf's 2 GiB limit");
    auto* proto = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
    google::protobuf::io::ArrayInputStream stream(data.data(), static_cast<int>(data.size()));
    google::protobuf::io::CodedInputStream coded(&stream);
    coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
    if (!proto->ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
        return Error::corrupt(
            path.string() + ": not a valid ONNX model (malformed or truncated protobuf)");
    if (!proto->has_graph() && proto->functions_size() == 0)
        return notAnOnnxModel(path.string(), "no graph and no functions");
    return proto;
}

// A parsed model whose large raw_data payloads stay in `file` (mapped, never copied).
struct Parsed {
    std::unique_ptr<google::protobuf::Arena> arena;
    onnx::ModelProto* proto = nullptr; // in `arena`
    std::unordered_map<onnx::TensorProto*, FileRange> inFile;
    ElidedElements leftOut;
};

std::unique_ptr<google::protobuf::Arena> newArena()
{
    google::protobuf::ArenaOptions options;
    options.start_block_size = 64 << 10;
    options.max_block_size = 1 << 20;
    return std::make_unique<google::protobuf::Arena>(options);
}

// Whether every byte `image` (a remote model's structure) left out lies in a payload the scan
// stripped (`payloads`, in file order): the parse must never take the zeros that stand for it.
Status checkLeftOutBytes(
    const StructureImage& image, const std::vector<RawPayload>& payloads, const fs::path& path)
{
    const uint64_t size = image.bytes().size();
    size_t p = 0;
    for (uint64_t at = 0; at < size; at += StructureImage::kBlockBytes) {
        const FileRange block{at, std::min(StructureImage::kBlockBytes, size - at)};
        if (image.covers(block))
            continue;
        while (p < payloads.size()
            && (!payloads[p].stripped || payloads[p].offset + payloads[p].length <= at))
            ++p;
        if (p == payloads.size() || payloads[p].offset > at
            || payloads[p].offset + payloads[p].length < at + block.length)
            return Error::internal(path.string() + ": bytes " + std::to_string(at) + "-"
                + std::to_string(at + block.length)
                + " were not fetched, yet are not a payload read from the server");
    }
    return {};
}

// `image`: a remote model's structure, `file` its bytes.
Result<Parsed> parseMapped(std::span<const std::byte> file, const fs::path& path,
    const ElideRule& leaveOut, const StructureImage* image)
{
    auto scan = scanModel(file, path.string(), Model::kInFileMinBytes, leaveOut);
    if (!scan)
        return scan.error();
    if (image)
        if (Status s = checkLeftOutBytes(*image, scan->payloads, path); !s)
            return s.error();
    Parsed parsed{newArena(), nullptr, {}, std::move(scan->elided)};
    auto proto = parseModel(scan->changed
            ? std::string_view(scan->skeleton)
            : std::string_view(reinterpret_cast<const char*>(file.data()), file.size()),
        path, *parsed.arena);
    if (!proto)
        return proto.error();
    std::string().swap(scan->skeleton);
    parsed.proto = *proto;
    // In file order: a tensor's raw_data is its last payload, as protobuf keeps it.
    for (const auto& payload : scan->payloads) {
        onnx::TensorProto* tensor = tensorAt(*parsed.proto, payload.path);
        if (!tensor)
            return Error::corrupt(path.string() + ": the tensor whose raw_data starts at byte "
                + std::to_string(payload.offset) + " is not in the parsed model");
        if (payload.stripped)
            parsed.inFile[tensor] = {payload.offset, payload.length};
        else
            parsed.inFile.erase(tensor);
    }
    return parsed;
}

std::string unreadable(const fs::path& path)
{
    return path.string() + ": not a valid ONNX model (malformed or truncated protobuf)";
}

// Tensor i of the index is either the next of `protoCount` parsed protos or one of an element
// left out (`leftOut`, its tensors consecutive in the index; the main graph's initializers
// come first in both, then its nodes' tensors): calls onLeftOut(list, entry) for each element
// left out and onProto(i, proto position) for each parsed tensor, in index order, while they
// return true.
template <typename OnLeftOut, typename OnProto>
void interleave(
    const ElidedElements& leftOut, size_t protoCount, OnLeftOut&& onLeftOut, OnProto&& onProto)
{
    size_t i = 0, p = 0;
    const auto protosUpTo = [&](uint64_t end) {
        for (; i < end; ++i)
            if (p >= protoCount || !onProto(i, p++))
                return false;
        return true;
    };
    for (const ElidedList* list : {&leftOut.initializers, &leftOut.nodes})
        for (size_t e = 0; e < list->size(); ++e) {
            if (!protosUpTo(list->firstTensor(e)) || !onLeftOut(*list, e))
                return;
            i += list->tensorCount(e);
        }
    protosUpTo(i + (protoCount - p));
}

bool parseMessage(std::span<const std::byte> bytes, google::protobuf::MessageLite& message)
{
    return bytes.size() <= static_cast<size_t>(std::numeric_limits<int>::max())
        && message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// The elements of `list` parsed into `arena`, in order; empty when protobuf refuses one.
template <typename T>
std::vector<T*> parseAll(const ElidedList& list, google::protobuf::Arena* arena)
{
    std::vector<T*> parsed(list.size());
    for (size_t e = 0; e < list.size(); ++e) {
        parsed[e] = google::protobuf::Arena::CreateMessage<T>(arena);
        if (!parseMessage(list.bytes(e), *parsed[e]))
            return {};
    }
    return parsed;
}

// Puts the `parsed` elements of `list` back into `field`, each at its position.
template <typename T>
void putBack(google::protobuf::RepeatedPtrField<T>& field, const ElidedList& list,
    const std::vector<T*>& parsed)
{
    std::vector<T*> kept(static_cast<size_t>(field.size()));
    // Room first: what can throw does so before the field gives up its elements.
    field.Reserve(static_cast<int>(kept.size() + parsed.size()));
    field.UnsafeArenaExtractSubrange(0, field.size(), kept.data());
    for (size_t position = 0, k = 0, e = 0; position < kept.size() + parsed.size(); ++position)
        if (e < parsed.size() && (list.position(e) == position || k == kept.size()))
            field.UnsafeArenaAddAllocated(parsed[e++]);
        else
            field.UnsafeArenaAddAllocated(kept[k++]);
}

// What parsing says of the tensors the index found.
struct Agreement {
    bool agree = true; // protobuf reads the same tensors, by name, in the index's order
    bool readable = true; // protobuf reads every element left out
    bool asProtobufWrites = true; // the bytes left out are protobuf's serialization of them
    bool nodesCounted = true; // each node left out holds the tensors the scan counted
};

// The ones left out are parsed here, one at a time, so that protobuf refuses the same
// models either way; and their bytes must be protobuf's serialization of them (a save
// writes the same bytes whatever it parsed).
Agreement agreementOf(const ElidedElements& leftOut, const std::vector<onnx::TensorProto*>& protos,
    const std::vector<TensorInfo>& tensors)
{
    Agreement out;
    out.agree = protos.size() + leftOut.tensorCount() == tensors.size();
    onnx::TensorProto tensor;
    onnx::NodeProto node;
    std::string serialized;
    const auto named = [&](size_t i, const std::string& name) {
        out.agree = name.empty() || name == tensors[i].name;
        return out.agree;
    };
    if (out.agree)
        interleave(
            leftOut, protos.size(),
            [&](const ElidedList& list, size_t e) {
                const auto bytes = list.bytes(e);
                const bool isNode = &list == &leftOut.nodes;
                google::protobuf::MessageLite& message
                    = isNode ? static_cast<google::protobuf::MessageLite&>(node) : tensor;
                out.readable = parseMessage(bytes, message);
                if (!out.readable)
                    return false;
                if (out.asProtobufWrites) {
                    message.SerializeToString(&serialized);
                    out.asProtobufWrites = std::equal(bytes.begin(), bytes.end(),
                        reinterpret_cast<const std::byte*>(serialized.data()),
                        reinterpret_cast<const std::byte*>(serialized.data() + serialized.size()));
                }
                if (!isNode)
                    return named(list.firstTensor(e), tensor.name());
                const std::vector<onnx::TensorProto*> held = tensorProtos(node);
                out.nodesCounted = held.size() == list.tensorCount(e);
                for (size_t k = 0; out.nodesCounted && k < held.size(); ++k)
                    if (!named(list.firstTensor(e) + k, held[k]->name()))
                        return false;
                return out.nodesCounted;
            },
            [&](size_t i, size_t p) { return named(i, protos[p]->name()); });
    return out;
}

// The elements left out as protobuf serializes them, for bytes another serializer wrote:
// a save writes the same bytes whatever it parsed. Fails on one protobuf cannot read.
Result<ElidedElements> reserialized(const ElidedElements& leftOut, const fs::path& path)
{
    onnx::TensorProto tensor;
    onnx::NodeProto node;
    std::string serialized;
    ElidedElements rewritten;
    for (const bool isNode : {false, true}) {
        const ElidedList& list = isNode ? leftOut.nodes : leftOut.initializers;
        ElidedList& out = isNode ? rewritten.nodes : rewritten.initializers;
        google::protobuf::MessageLite& message
            = isNode ? static_cast<google::protobuf::MessageLite&>(node) : tensor;
        for (size_t e = 0; e < list.size(); ++e) {
            if (!parseMessage(list.bytes(e), message))
                return Error::corrupt(unreadable(path));
            message.SerializeToString(&serialized);
            out.add(list.position(e), list.firstTensor(e), list.tensorCount(e),
                std::as_bytes(std::span(serialized.data(), serialized.size())));
        }
    }
    return rewritten;
}

} // namespace

Status Model::loadProtos()
{
    if (m_proto)
        return m_leftOut.empty() ? Status() : parseLeftOut();
    return parseProtos({}, false);
}

Status Model::loadProtosLeavingOut(const std::function<bool(size_t)>& leaveOut)
{
    if (!m_proto)
        return parseProtos(leaveOut, true);
    // Left out by an earlier save: parsed in when this one needs one of their tensors.
    for (const ElidedList* list : {&m_leftOut.initializers, &m_leftOut.nodes})
        for (size_t e = 0; e < list->size(); ++e)
            for (uint64_t t = list->firstTensor(e); t < list->firstTensor(e) + list->tensorCount(e);
                 ++t)
                if (!leaveOut(t))
                    return parseLeftOut();
    return {};
}

onnx::ModelProto& Model::protoLeavingOut()
{
    if (!m_proto)
        return mutableProto();
    return *m_proto;
}

Status Model::parseProtos(const std::function<bool(size_t)>& leaveOut, bool nodes)
{
    if (!m_modelFile)
        return Error::internal(m_path.string() + ": the model file is no longer mapped");
    // A remote model's structure is in memory: the payloads it leaves out are the large ones
    // the scan strips (kInFileMinBytes is far below the image's block), read from the source.
    auto bytes = m_image ? Result<std::span<const std::byte>>(m_image->bytes())
                         : m_modelFile->view(0, m_fileBytes);
    if (!bytes)
        return bytes.error();
    Result<Parsed> parsed = Error::internal("not run");
    ElideRule elide;
    if (leaveOut)
        elide.select = [&](uint64_t i) { return i < m_tensors.size() && leaveOut(i); };
    elide.nodes = nodes;
    const fs::path name = origin();
    if (Status s = readMapped(
            name.string(), [&] { parsed = parseMapped(*bytes, name, elide, m_image.get()); });
        !s)
        return s.error();
    if (!parsed)
        return parsed.error();
    m_modelFile->releasePages(0, m_fileBytes); // the parse is done with them
    const std::vector<onnx::TensorProto*> protos = tensorProtos(*parsed->proto);
    const Agreement parse = agreementOf(parsed->leftOut, protos, m_tensors);
    if (!parse.readable)
        return Error::corrupt(unreadable(m_path));
    if (!parse.nodesCounted) // never seen: the scan counts tensors as tensorProtos() lists them
        return parseProtos(leaveOut, false);
    if (!parse.agree)
        return Error::corrupt(m_path.string()
            + ": protobuf reads other tensors than the index found (a field given twice?)");
    if (!parse.asProtobufWrites) { // rare: written by another serializer, or by hand
        auto rewritten = reserialized(parsed->leftOut, m_path);
        if (!rewritten)
            return rewritten.error();
        parsed->leftOut = std::move(*rewritten);
    }
    interleave(
        parsed->leftOut, protos.size(),
        [&](const ElidedList& list, size_t e) {
            for (uint64_t k = 0; k < list.tensorCount(e); ++k)
                m_tensors[list.firstTensor(e) + k].proto = nullptr;
            return true;
        },
        [&](size_t i, size_t p) {
            m_tensors[i].proto = protos[p];
            return true;
        });
    m_arena = std::move(parsed->arena);
    m_proto.reset(parsed->proto);
    m_inFile = std::move(parsed->inFile);
    m_leftOut = std::move(parsed->leftOut);
    m_typedSpans.clear();
    return {};
}

Status Model::parseLeftOut()
{
    // Parsed first, so that a failure changes nothing.
    const auto initializers = parseAll<onnx::TensorProto>(m_leftOut.initializers, m_arena.get());
    const auto nodes = parseAll<onnx::NodeProto>(m_leftOut.nodes, m_arena.get());
    if (initializers.size() != m_leftOut.initializers.size()
        || nodes.size() != m_leftOut.nodes.size())
        return Error::corrupt(unreadable(m_path));
    auto& graph = *m_proto->mutable_graph();
    putBack(*graph.mutable_initializer(), m_leftOut.initializers, initializers);
    putBack(*graph.mutable_node(), m_leftOut.nodes, nodes);
    for (size_t e = 0; e < initializers.size(); ++e)
        m_tensors[m_leftOut.initializers.firstTensor(e)].proto = initializers[e];
    for (size_t e = 0; e < nodes.size(); ++e) {
        const std::vector<onnx::TensorProto*> held = tensorProtos(*nodes[e]);
        for (size_t k = 0; k < held.size(); ++k)
            m_tensors[m_leftOut.nodes.firstTensor(e) + k].proto = held[k];
    }
    m_leftOut.clear();
    return {};
}

Result<onnx::TensorProto> Model::leftOutTensor(size_t index) const
{
    onnx::TensorProto tensor;
    const ElidedList& initializers = m_leftOut.initializers;
    const ElidedList& nodes = m_leftOut.nodes;
    if (const auto e = initializers.findTensor(index);
        e && parseMessage(initializers.bytes(*e), tensor))
        return tensor;
    onnx::NodeProto node;
    if (const auto e = nodes.findTensor(index); e && parseMessage(nodes.bytes(*e), node)) {
        const std::vector<onnx::TensorProto*> held = tensorProtos(node);
        if (const uint64_t k = index - nodes.firstTensor(*e); k < held.size())
            return std::move(*held[k]);
    }
    return Error::internal(m_tensors[index].qualifiedName() + ": its TensorProto is not loaded");
}

std::string Model::serializeWhole() const
{
    std::string bytes;
    m_proto->SerializeToString(&bytes);
    if (m_leftOut.empty())
        return bytes;
    auto whole = spliceModel(
        std::as_bytes(std::span(bytes.data(), bytes.size())), m_path.string(),
        [](std::span<const std::byte>) { return std::optional<PayloadReplacement>(); }, &m_leftOut);
    if (!whole)
        throw std::logic_error(whole.error().message);
    return std::move(whole->bytes);
}

const onnx::ModelProto& Model::proto() const
{
    if (!m_proto || !m_leftOut.empty())
        if (Status s = const_cast<Model*>(this)->loadProtos(); !s)
            throw std::runtime_error(s.error().message);
    return *m_proto;
}

onnx::ModelProto& Model::mutableProto()
{
    if (Status s = loadProtos(); !s)
        throw std::runtime_error(s.error().message);
    return *m_proto;
}

Status Model::indexOwnProtos(std::span<const std::byte> bytes, const ReleaseRule& release)
{
    const std::vector<onnx::TensorProto*> protos = tensorProtos(*m_proto);
    const auto eachProto = [&](const auto& f) {
        interleave(
            m_leftOut, protos.size(), [](const ElidedList&, size_t) { return true; },
            [&](size_t i, size_t p) {
                f(i, protos[p]);
                return true;
            });
    };
    std::unordered_map<size_t, FileRange> inFileByIndex;
    eachProto([&](size_t i, onnx::TensorProto* proto) {
        if (auto it = m_inFile.find(proto); it != m_inFile.end())
            inFileByIndex.emplace(i, it->second);
    });
    const RawPayloadRule inFile = [&](size_t tensor, FileRange) -> std::optional<FileRange> {
        auto it = inFileByIndex.find(tensor);
        return it == inFileByIndex.end() ? std::nullopt : std::optional<FileRange>(it->second);
    };
    auto index = indexTensors(bytes, m_path.string(), inFile, release);
    if (!index || index->tensors.size() != protos.size() + m_leftOut.tensorCount())
        return Error::internal(m_path.string() + ": the index of the model's own protos failed"
            + (index ? std::string() : ": " + index.error().message));
    eachProto([&](size_t i, onnx::TensorProto* proto) { index->tensors[i].proto = proto; });
    adoptIndex(std::move(*index));
    m_typedSpans.clear(); // read from the protos
    return {};
}

Status Model::materializeInline(const std::function<bool(size_t)>& needed)
{
    if (Status s = loadProtos(); !s)
        return s;
    if (m_inFile.empty() || !m_materialized.empty())
        return {};
    std::unordered_set<const onnx::TensorProto*> skip;
    if (needed)
        for (size_t i = 0; i < m_tensors.size(); ++i)
            if (m_tensors[i].inlineRange && !needed(i))
                skip.insert(m_tensors[i].proto);
    std::vector<std::pair<onnx::TensorProto*, std::string>> payloads;
    if (m_lender) { // the file has holes where they lie: each comes from its lender
        for (const auto& [tensor, range] : m_inFile) {
            if (skip.count(tensor))
                continue;
            auto lent = m_lender(range);
            if (!lent)
                return lent.error();
            const auto bytes = lent->bytes();
            if (bytes.size() != range.length)
                return Error::internal("a lent payload of " + std::to_string(bytes.size())
                    + " bytes where the model has " + std::to_string(range.length));
            payloads.emplace_back(
                tensor, std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
        }
    }
    // Read with pread, not copied from the mapping: faulting in a mapping page by page costs
    // more than the copy itself (several seconds per GiB on a virtual machine). Everything is
    // read first, from the very file validated, so a failure changes nothing.
    auto fd = UniqueFd::openRead(m_modelFile->path());
    if (!fd)
        return fd.error();
    auto identity = identityOf(fd->get());
    if (!identity || !(*identity == m_modelFile->identity()))
        return Error::changed(m_modelFile->path().string()
            + ": invalidated: the file was replaced or changed since the model was opened");
    for (const auto& [tensor, range] : m_inFile) {
        if (m_lender || skip.count(tensor))
            continue;
        std::string bytes(range.length, '\0');
        auto view = std::as_writable_bytes(std::span(bytes.data(), bytes.size()));
        if (Status s = preadExact(fd->get(), view, range.offset, m_modelFile->path()); !s)
            return s.error();
        payloads.emplace_back(tensor, std::move(bytes));
    }
    for (auto& [tensor, bytes] : payloads) {
        tensor->set_raw_data(std::move(bytes));
        m_materialized.push_back(tensor);
    }
    return {};
}

void Model::releaseInline()
{
    for (onnx::TensorProto* tensor : m_materialized)
        std::string().swap(*tensor->mutable_raw_data());
    m_materialized.clear();
}

void Model::forgetInline()
{
    m_inFile.clear();
    m_materialized.clear();
    m_modelFile.reset();
    m_lender = nullptr;
    for (auto& info : m_tensors)
        info.inlineRange.reset();
}

} // namespace repack
