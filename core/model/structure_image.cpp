#include "structure_image.h"

#include "model.h"
#include "wire_reader.h"

#include <onnx/onnx_pb.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

namespace repack {

namespace {

// The messages the walk goes into; any other field is fetched whole.
enum class Kind : uint8_t { Model, Training, Graph, Node, Attribute, Function, Tensor, Sparse };

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
        break;
    }
    return std::nullopt;
}

// A payload shorter than a block is fetched with its neighbours anyway.
constexpr uint64_t kMinPayload = StructureImage::kBlockBytes;
// Read-ahead: a fetch that follows the previous one with nothing skipped between them (the
// structure goes on: an external-data model's .onnx is all structure) asks for kGrowth times
// as many blocks, at most kMaxRun; a skipped payload starts again at one block. The 16.5 MB
// .onnx of 100,000 external tensors is three requests, not 63; an inline model's weights are
// still left out (bench/remote_inspect.sh).
constexpr uint64_t kGrowth = 8;
constexpr uint64_t kMaxRun = 64; // blocks: 16 MiB

class StructureWalk {
public:
    StructureWalk(std::byte* image, uint64_t size, std::vector<bool>& fetched,
        const StructureImage::Read& read)
        : m_image(reinterpret_cast<unsigned char*>(image))
        , m_size(size)
        , m_fetched(fetched)
        , m_read(read)
    {
    }

    // Walks the message [begin, end) of `kind`. False when the walk ended early: a fetch failed
    // (error() says), or bytes that are not a well-formed message were met and every byte
    // from there to the end of the file was fetched instead.
    bool message(Kind kind, uint64_t begin, uint64_t end, int depth)
    {
        uint64_t pos = begin;
        while (pos < end) {
            const uint64_t at = pos;
            uint64_t tag = 0;
            if (!varint(pos, end, tag))
                return !m_error && rest(at);
            const auto number = static_cast<uint32_t>(tag >> 3);
            switch (static_cast<int>(tag & 7)) {
            case wire::Varint: {
                uint64_t ignored = 0;
                if (!varint(pos, end, ignored))
                    return !m_error && rest(at);
                break;
            }
            case wire::Fixed64:
            case wire::Fixed32: {
                const uint64_t width = (tag & 7) == wire::Fixed64 ? 8 : 4;
                if (end - pos < width || !touch(pos, pos + width))
                    return !m_error && rest(at);
                pos += width;
                break;
            }
            case wire::Len: {
                uint64_t length = 0;
                if (!varint(pos, end, length) || length > end - pos)
                    return !m_error && rest(at);
                const std::optional<Kind> child = childOf(kind, number);
                if (child && depth + 1 <= wire::kMaxDepth) {
                    if (!message(*child, pos, pos + length, depth + 1))
                        return false;
                } else if (kind == Kind::Tensor && number == onnx::TensorProto::kRawDataFieldNumber
                    && length >= kMinPayload) {
                    m_skipped = true; // a payload: left out
                } else if (!touch(pos, pos + length)) {
                    return false;
                }
                pos += length;
                break;
            }
            default: // groups, or not a tag at all: the index reads these bytes as they are
                return rest(at);
            }
        }
        return true;
    }

    const std::optional<Error>& error() const { return m_error; }

private:
    // Fetches every block from `pos` to the end of the file, and ends the walk.
    bool rest(uint64_t pos)
    {
        touch(pos, m_size);
        return false;
    }

    bool varint(uint64_t& pos, uint64_t end, uint64_t& value)
    {
        value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos >= end || !touch(pos, pos + 1))
                return false;
            const unsigned char b = m_image[pos++];
            value |= static_cast<uint64_t>(b & 0x7f) << shift;
            if (!(b & 0x80))
                return true;
        }
        return false;
    }

    // Fetches the blocks of [begin, end) not fetched yet, with read-ahead: each request asks for
    // a run of blocks, all of [begin, end)'s that follow on, or more while nothing is skipped.
    bool touch(uint64_t begin, uint64_t end)
    {
        if (begin >= end)
            return true;
        constexpr uint64_t block = StructureImage::kBlockBytes;
        const uint64_t last = (end - 1) / block;
        for (uint64_t index = begin / block; index <= last; ++index) {
            if (m_fetched[index])
                continue;
            m_run = !m_skipped && index == m_runEnd ? std::min(m_run * kGrowth, kMaxRun) : 1;
            m_skipped = false;
            uint64_t stop = std::max(index + m_run, last + 1); // blocks [index, stop)
            stop = std::min<uint64_t>(stop, m_fetched.size());
            for (uint64_t next = index + 1; next < stop; ++next)
                if (m_fetched[next])
                    stop = next; // fetched before: never asked twice
            m_runEnd = stop;
            const uint64_t offset = index * block;
            const uint64_t length = std::min(stop * block, m_size) - offset;
            auto bytes = m_read(offset, length);
            if (!bytes) {
                m_error.emplace(bytes.error());
                return false;
            }
            if (bytes->bytes().size() != length) {
                m_error.emplace(Error::io("read " + std::to_string(bytes->bytes().size())
                    + " bytes at " + std::to_string(offset) + " where " + std::to_string(length)
                    + " were asked"));
                return false;
            }
            std::memcpy(m_image + offset, bytes->bytes().data(), length);
            std::fill(m_fetched.begin() + static_cast<ptrdiff_t>(index),
                m_fetched.begin() + static_cast<ptrdiff_t>(stop), true);
            index = stop - 1;
        }
        return true;
    }

    unsigned char* m_image;
    uint64_t m_size;
    std::vector<bool>& m_fetched;
    const StructureImage::Read& m_read;
    std::optional<Error> m_error;
    uint64_t m_run = 1; // blocks the last request asked for
    uint64_t m_runEnd = UINT64_MAX; // the block after them
    bool m_skipped = false; // a payload was left out since the last request
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
    StructureWalk walk(image.m_data, size, image.m_fetched, read);
    if (!walk.message(Kind::Model, 0, size, 0) && walk.error())
        return walk.error()->prefixed(name + ": ");
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
    void prefetch(std::span<const ByteRange> ranges, const CancelToken* cancel) override
    {
        m_remote->prefetch(ranges, cancel);
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
