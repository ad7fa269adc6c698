#include "structure_image.h"

#include "model.h"
#include "model_start.h"
#include "wire_reader.h"

#include <onnx/onnx_pb.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

namespace repack {

namespace {

// The messages the walk goes into; any other field is fetched whole once the walk is done.
// Unknown: a group's fields, none of which the walk goes into.
enum class Kind : uint8_t {
    Model,
    Training,
    Graph,
    Node,
    Attribute,
    Function,
    Tensor,
    Sparse,
    Unknown
};

// The kind of message field `number` of a `kind` message holds, when the walk goes into it.
std::optional<Kind> childOf(Kind kind, uint32_t number)
{
    switch (kind) {
    case Kind::Model:
        if (number == onnx::ModelProto::kGraphFieldNumber)
            return Kind::Graph;
        if (number == onnx::ModelProto::kFunctionsFieldNumber)
            return Kind::Function;
        if (number == onnx::ModelProto::kTrainingInfoFieldNumber)
            return Kind::Training;
        break;
    case Kind::Training:
        if (number == onnx::TrainingInfoProto::kInitializationFieldNumber
            || number == onnx::TrainingInfoProto::kAlgorithmFieldNumber)
            return Kind::Graph;
        break;
    case Kind::Graph:
        if (number == onnx::GraphProto::kNodeFieldNumber)
            return Kind::Node;
        if (number == onnx::GraphProto::kInitializerFieldNumber)
            return Kind::Tensor;
        if (number == onnx::GraphProto::kSparseInitializerFieldNumber)
            return Kind::Sparse;
        break;
    case Kind::Node:
        if (number == onnx::NodeProto::kAttributeFieldNumber)
            return Kind::Attribute;
        break;
    case Kind::Attribute:
        if (number == onnx::AttributeProto::kTFieldNumber
            || number == onnx::AttributeProto::kTensorsFieldNumber)
            return Kind::Tensor;
        if (number == onnx::AttributeProto::kGFieldNumber
            || number == onnx::AttributeProto::kGraphsFieldNumber)
            return Kind::Graph;
        if (number == onnx::AttributeProto::kSparseTensorFieldNumber
            || number == onnx::AttributeProto::kSparseTensorsFieldNumber)
            return Kind::Sparse;
        break;
    case Kind::Function:
        if (number == onnx::FunctionProto::kNodeFieldNumber)
            return Kind::Node;
        break;
    case Kind::Sparse:
        if (number == onnx::SparseTensorProto::kValuesFieldNumber
            || number == onnx::SparseTensorProto::kIndicesFieldNumber)
            return Kind::Tensor;
        break;
    case Kind::Tensor:
    case Kind::Unknown:
        break;
    }
    return std::nullopt;
}

// A payload shorter than a block is fetched with its neighbours anyway.
constexpr uint64_t kMinPayload = StructureImage::kBlockBytes;
// Read-ahead: a fetch that follows the previous one with nothing skipped between them (the
// structure goes on: an external-data model's .onnx is all structure) asks for kGrowth times
// as many blocks, at most kMaxRun, never past the end of the graph (function, training_info)
// walked; a skipped payload starts again at one block. The 16.5 MB .onnx of 100,000 external
// tensors is three requests, not 63; an inline model's weights are still left out
// (bench/remote_inspect.sh).
constexpr uint64_t kGrowth = 8;
constexpr uint64_t kMaxRun = 64; // blocks: 16 MiB
// A model's graph or functions field follows a few small header fields (protobuf writes them
// in field order: graph is the 7th): a walk that fetches this much of a file's top level
// without meeting either has no model to find there.
constexpr uint64_t kProbeBytes = 4 << 20;

class StructureWalk {
public:
    StructureWalk(std::byte* image, uint64_t size, std::vector<bool>& fetched,
        const StructureImage::Read& read, const std::string& name)
        : m_image(reinterpret_cast<unsigned char*>(image))
        , m_size(size)
        , m_fetched(fetched)
        , m_wanted(fetched.size(), false)
        , m_read(read)
        , m_name(name)
    {
    }

    // Fetches the structure of the model; the first fault met, if any.
    Status run()
    {
        // The first block holds the model's first field, or the file is no model at all.
        const uint64_t first = std::min(m_size, StructureImage::kBlockBytes);
        if (!touch(0, first))
            return *m_error;
        if (Status s
            = checkModelStart({reinterpret_cast<const std::byte*>(m_image), first}, m_size, m_name);
            !s)
            return s;
        uint64_t pos = 0;
        if (!fields(Kind::Model, pos, m_size, 0))
            return *m_error;
        if (m_probing)
            return notAnOnnxModel(m_name, "no graph and no functions");
        for (const auto& [begin, end] : m_pending)
            if (!topLevelChild(Kind::Training, begin, end))
                return *m_error;
        if (!fetchWanted())
            return *m_error;
        return {};
    }

private:
    // Walks the fields from `pos` (advanced) to `end` of a `kind` message at nesting `depth`; of
    // the group of field `group` that starts at `groupAt` when `group` is not 0 (its end-group
    // tag ends it, as protobuf reads groups). False on the first fault (m_error says).
    bool fields(
        Kind kind, uint64_t& pos, uint64_t end, int depth, uint32_t group = 0, uint64_t groupAt = 0)
    {
        while (pos < end) {
            const uint64_t at = pos;
            uint32_t number = 0;
            int type = 0;
            if (!tag(pos, end, number, type))
                return false;
            switch (type) {
            case wire::Varint: {
                uint64_t ignored = 0;
                if (!varint(pos, end, ignored))
                    return false;
                break;
            }
            case wire::Fixed64:
            case wire::Fixed32: {
                const uint64_t width = type == wire::Fixed64 ? 8 : 4;
                if (end - pos < width)
                    return malformed("truncated fixed-width value", at);
                if (!touch(pos, pos + width))
                    return false;
                pos += width;
                break;
            }
            case wire::Len:
                if (!lengthDelimited(kind, number, pos, end, depth))
                    return false;
                break;
            case wire::StartGroup:
                if (depth + 1 > wire::kMaxDepth)
                    return malformed(
                        "groups nested deeper than " + std::to_string(wire::kMaxDepth), at);
                if (!fields(Kind::Unknown, pos, end, depth + 1, number, at))
                    return false;
                break;
            case wire::EndGroup:
                if (group == 0)
                    return malformed("end-group tag without a group", at);
                if (number != group)
                    return malformed("end-group tag of another group", at);
                return true;
            default:
                return malformed("invalid wire type " + std::to_string(type), at);
            }
        }
        return group == 0 || malformed("group without its end-group tag", groupAt);
    }

    // The graph, a function or a training_info [begin, end) of the model. Read-ahead stays
    // inside it: past it lie top-level fields of a few bytes, or whatever a file puts after a
    // model.
    bool topLevelChild(Kind kind, uint64_t begin, uint64_t end)
    {
        m_horizon = end;
        const bool walked = message(kind, begin, end, 1);
        m_horizon = 0;
        return walked;
    }

    bool message(Kind kind, uint64_t begin, uint64_t end, int depth)
    {
        if (depth > wire::kMaxDepth)
            return malformed(
                "messages nested deeper than " + std::to_string(wire::kMaxDepth), begin);
        return fields(kind, begin, end, depth);
    }

    // A length-delimited field's length at `pos`, then its value: a message walked, a payload
    // left out, anything else fetched once the structure around it has been walked.
    bool lengthDelimited(Kind kind, uint32_t number, uint64_t& pos, uint64_t end, int depth)
    {
        const uint64_t lengthAt = pos;
        uint64_t length = 0;
        if (!varint(pos, end, length))
            return false;
        if (length > end - pos)
            return malformed("length " + std::to_string(length)
                    + " runs past the end of its message (byte " + std::to_string(end) + ")",
                lengthAt);
        const uint64_t begin = pos;
        pos += length;
        const std::optional<Kind> child = childOf(kind, number);
        if (kind == Kind::Model && child) {
            // Until the top level shows a graph or functions, the file is still to prove itself
            // a model: a training_info before them waits.
            if (*child != Kind::Training)
                m_probing = false;
            if (m_probing) {
                m_pending.emplace_back(begin, pos);
                return true;
            }
            return topLevelChild(*child, begin, pos);
        }
        if (child)
            return message(*child, begin, pos, depth + 1);
        if (kind == Kind::Tensor && number == onnx::TensorProto::kRawDataFieldNumber
            && length >= kMinPayload) {
            m_skipped = true; // a payload: left out
            return true;
        }
        // Names, shapes, typed data, unknown fields: their bytes are never walked, so a fault
        // further on is found before they are fetched.
        if (length >= kMinPayload)
            m_skipped = true;
        if (length > 0) {
            constexpr uint64_t block = StructureImage::kBlockBytes;
            std::fill(m_wanted.begin() + static_cast<ptrdiff_t>(begin / block),
                m_wanted.begin() + static_cast<ptrdiff_t>((pos - 1) / block + 1), true);
        }
        return true;
    }

    // A tag, and a varint, read as the index reads them once their bytes are fetched.
    bool tag(uint64_t& pos, uint64_t end, uint32_t& number, int& type)
    {
        wire::Reader reader(m_image, pos, end);
        return fetchVarint(pos, end)
            && (reader.tag(pos, number, type) || malformed(reader.error()));
    }
    bool varint(uint64_t& pos, uint64_t end, uint64_t& value)
    {
        wire::Reader reader(m_image, pos, end);
        return fetchVarint(pos, end)
            && (reader.varint(pos, end, value) || malformed(reader.error()));
    }
    // Fetches the bytes of the varint at `pos` up to its last: the first below 0x80, at most
    // the tenth.
    bool fetchVarint(uint64_t pos, uint64_t end)
    {
        for (uint64_t at = pos; at < end && at - pos < 10; ++at)
            if (!touch(at, at + 1) || m_image[at] < 0x80)
                break;
        return !m_error;
    }

    // The fault the index would report of the same bytes, in its words ("what at byte N").
    bool malformed(const std::string& what, uint64_t at)
    {
        return malformed(what + " at byte " + std::to_string(at));
    }
    bool malformed(const std::string& fault)
    {
        m_error.emplace(Error::corrupt(
            m_name + ": not a valid ONNX model (malformed or truncated protobuf): " + fault));
        return false;
    }

    // Fetches the blocks of [begin, end) not fetched yet. Inside the model's graph, functions
    // and training_info, with read-ahead: each request asks for a run of blocks, more while
    // nothing is skipped.
    bool touch(uint64_t begin, uint64_t end)
    {
        if (begin >= end)
            return true;
        constexpr uint64_t block = StructureImage::kBlockBytes;
        const uint64_t last = (end - 1) / block;
        for (uint64_t index = begin / block; index <= last; ++index) {
            if (m_fetched[index])
                continue;
            if (m_probing && index > 0 && m_fetchedBytes + block > kProbeBytes) {
                m_error.emplace(notAnOnnxModel(m_name,
                    "no graph and no functions among its fields up to byte "
                        + std::to_string(begin)));
                return false;
            }
            const uint64_t ahead
                = !m_skipped && index == m_runEnd ? std::min(m_run * kGrowth, kMaxRun) : 1;
            const uint64_t horizon = (m_horizon + block - 1) / block;
            m_skipped = false;
            const uint64_t stop
                = runEnd(index, std::max(std::min(index + ahead, horizon), last + 1));
            m_run = stop - index;
            m_runEnd = stop;
            if (!fetchBlocks(index, stop))
                return false;
            index = stop - 1;
        }
        return true;
    }

    // The end of the run of blocks from `index` to `stop` at most: never a block fetched
    // before, never more than kMaxRun blocks in one request.
    uint64_t runEnd(uint64_t index, uint64_t stop) const
    {
        stop = std::min({stop, index + kMaxRun, static_cast<uint64_t>(m_fetched.size())});
        for (uint64_t next = index + 1; next < stop; ++next)
            if (m_fetched[next])
                return next;
        return stop;
    }

    // Fetches what the walk left to the end: every block of a field it did not go into.
    bool fetchWanted()
    {
        for (uint64_t index = 0; index < m_wanted.size(); ++index) {
            if (!m_wanted[index] || m_fetched[index])
                continue;
            uint64_t stop = runEnd(index, m_wanted.size());
            for (uint64_t next = index + 1; next < stop; ++next)
                if (!m_wanted[next])
                    stop = next;
            if (!fetchBlocks(index, stop))
                return false;
            index = stop - 1;
        }
        return true;
    }

    // One request: the blocks [index, stop).
    bool fetchBlocks(uint64_t index, uint64_t stop)
    {
        constexpr uint64_t block = StructureImage::kBlockBytes;
        const uint64_t offset = index * block;
        const uint64_t length = std::min(stop * block, m_size) - offset;
        auto bytes = m_read(offset, length);
        if (!bytes) {
            m_error.emplace(bytes.error().prefixed(m_name + ": "));
            return false;
        }
        if (bytes->bytes().size() != length) {
            m_error.emplace(
                Error::io(m_name + ": read " + std::to_string(bytes->bytes().size()) + " bytes at "
                    + std::to_string(offset) + " where " + std::to_string(length) + " were asked"));
            return false;
        }
        std::memcpy(m_image + offset, bytes->bytes().data(), length);
        std::fill(m_fetched.begin() + static_cast<ptrdiff_t>(index),
            m_fetched.begin() + static_cast<ptrdiff_t>(stop), true);
        m_fetchedBytes += length;
        return true;
    }

    unsigned char* m_image;
    uint64_t m_size;
    std::vector<bool>& m_fetched;
    std::vector<bool> m_wanted; // blocks of fields fetched after the walk
    const StructureImage::Read& m_read;
    const std::string& m_name;
    std::optional<Error> m_error;
    uint64_t m_fetchedBytes = 0;
    // True until the top level shows a graph or functions field: at most kProbeBytes fetched.
    bool m_probing = true;
    // The end of the top-level field walked, where read-ahead stops; 0 outside them: none.
    uint64_t m_horizon = 0;
    std::vector<std::pair<uint64_t, uint64_t>> m_pending; // training_info met while probing
    uint64_t m_run = 1; // blocks the last request asked for
    uint64_t m_runEnd = UINT64_MAX; // the block after them
    bool m_skipped = false; // a payload or a large field was left out since the last request
};

} // namespace

Result<StructureImage> StructureImage::fetch(
    uint64_t size, const Read& read, const std::string& name)
{
    StructureImage image;
    if (size == 0)
        return image;
    // Address space for the whole file; only the pages written take memory.
    const long page = ::sysconf(_SC_PAGESIZE);
    image.m_mapped = (size + page - 1) / page * page;
    void* base = ::mmap(nullptr, image.m_mapped, PROT_READ | PROT_WRITE,
        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return outOfMemory(name + ": the structure of a " + std::to_string(size) + "-byte model");
    image.m_data = static_cast<std::byte*>(base);
    image.m_size = size;
    image.m_fetched.assign((size + kBlockBytes - 1) / kBlockBytes, false);
    StructureWalk walk(image.m_data, size, image.m_fetched, read, name);
    if (Status s = walk.run(); !s)
        return s.error();
    ::mprotect(base, image.m_mapped, PROT_READ);
    return image;
}

StructureImage::StructureImage(StructureImage&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr))
    , m_size(std::exchange(other.m_size, 0))
    , m_mapped(std::exchange(other.m_mapped, 0))
    , m_fetched(std::move(other.m_fetched))
{
}

StructureImage& StructureImage::operator=(StructureImage&& other) noexcept
{
    if (this != &other) {
        if (m_data)
            ::munmap(m_data, m_mapped);
        m_data = std::exchange(other.m_data, nullptr);
        m_size = std::exchange(other.m_size, 0);
        m_mapped = std::exchange(other.m_mapped, 0);
        m_fetched = std::move(other.m_fetched);
    }
    return *this;
}

StructureImage::~StructureImage()
{
    if (m_data)
        ::munmap(m_data, m_mapped);
}

bool StructureImage::covers(FileRange range) const
{
    if (range.length == 0)
        return range.offset <= m_size;
    if (range.offset >= m_size || range.length > m_size - range.offset)
        return false;
    for (uint64_t index = range.offset / kBlockBytes;
         index <= (range.offset + range.length - 1) / kBlockBytes; ++index)
        if (!m_fetched[index])
            return false;
    return true;
}

uint64_t StructureImage::fetchedBytes() const
{
    uint64_t total = 0;
    for (size_t index = 0; index < m_fetched.size(); ++index)
        if (m_fetched[index])
            total += std::min(kBlockBytes, m_size - index * kBlockBytes);
    return total;
}

namespace {

class StructureBackedSource final : public ByteSource {
public:
    StructureBackedSource(
        std::shared_ptr<const StructureImage> image, std::shared_ptr<ByteSource> remote)
        : m_image(std::move(image))
        , m_remote(std::move(remote))
    {
    }
    const SourceIdentity& identity() const override { return m_remote->identity(); }
    std::string displayName() const override { return m_remote->displayName(); }
    Result<TensorBytes> read(uint64_t offset, uint64_t length, const CancelToken* cancel) override
    {
        if (m_image->covers({offset, length}))
            return TensorBytes::lent(m_image->bytes().subspan(offset, length), m_image);
        return m_remote->read(offset, length, cancel);
    }
    // A large payload (a save copying it) goes straight from the server into `into`.
    Status readInto(uint64_t offset, std::span<std::byte> into, const CancelToken* cancel) override
    {
        if (m_image->covers({offset, into.size()})) {
            const auto bytes = m_image->bytes().subspan(offset, into.size());
            std::copy(bytes.begin(), bytes.end(), into.begin());
            return {};
        }
        return m_remote->readInto(offset, into, cancel);
    }
    Status revalidate(const CancelToken* cancel) const override
    {
        return m_remote->revalidate(cancel);
    }

private:
    std::shared_ptr<const StructureImage> m_image;
    std::shared_ptr<ByteSource> m_remote;
};

} // namespace

std::shared_ptr<ByteSource> structureBackedSource(
    std::shared_ptr<const StructureImage> image, std::shared_ptr<ByteSource> remote)
{
    return std::make_shared<StructureBackedSource>(std::move(image), std::move(remote));
}

} // namespace repack
