#include "model_writer.h"

#include "core/model/wire_scan.h"
#include "core/posix_file.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <array>
#include <climits>
#include <cstring>
#include <random>

namespace repack {
namespace {

Error tooLarge(const std::filesystem::path& path, uint64_t size)
{
    return Error::usage(path.string() + ": the model would be " + std::to_string(size)
        + " bytes, past protobuf's 2 GiB limit; move tensors to external data");
}

// Serializes `model` deterministically into `stream`, refusing models past protobuf's limit
// before writing a byte. Returns the model's size; the stream reports write errors.
Result<uint64_t> serialize(const onnx::ModelProto& model,
    google::protobuf::io::ZeroCopyOutputStream& stream, const std::filesystem::path& path)
{
    const size_t size = model.ByteSizeLong(); // also the cached sizes serialization uses
    if (size > static_cast<size_t>(INT_MAX))
        return tooLarge(path, size);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    model.SerializeWithCachedSizes(&coded);
    if (coded.HadError())
        return Error::internal(path.string() + ": cannot serialize the model");
    return static_cast<uint64_t>(size);
}

Result<uint64_t> serializeTo(
    const onnx::ModelProto& model, int fd, const std::filesystem::path& path)
{
    google::protobuf::io::FileOutputStream stream(fd, 1 << 20);
    auto size = serialize(model, stream, path);
    if (!size && stream.GetErrno() == 0)
        return size.error(); // refused before writing
    if (!size || !stream.Flush())
        return Error::io(systemMessage("cannot write", path, stream.GetErrno()));
    return size;
}

// A placeholder raw_data: a nonce no real payload can be expected to equal, then the index.
constexpr size_t kNonceBytes = 16;
constexpr size_t kMarkerBytes = kNonceBytes + 8;
using Nonce = std::array<unsigned char, kNonceBytes>;

Nonce freshNonce()
{
    std::random_device random;
    Nonce nonce;
    for (auto& b : nonce)
        b = static_cast<unsigned char>(random());
    return nonce;
}

std::string marker(const Nonce& nonce, size_t index)
{
    std::string m(reinterpret_cast<const char*>(nonce.data()), nonce.size());
    for (int i = 0; i < 8; ++i)
        m.push_back(static_cast<char>((static_cast<uint64_t>(index) >> (8 * i)) & 0xff));
    return m;
}

// The placeholders, set for as long as the model is serialized.
class Placeholders {
public:
    Placeholders(std::span<const SplicedPayload> payloads, const Nonce& nonce)
        : m_payloads(payloads)
    {
        for (size_t i = 0; i < payloads.size(); ++i)
            payloads[i].tensor->set_raw_data(marker(nonce, i));
    }
    ~Placeholders()
    {
        for (const auto& p : m_payloads)
            p.tensor->set_raw_data(std::string());
    }
    Placeholders(const Placeholders&) = delete;
    Placeholders& operator=(const Placeholders&) = delete;

private:
    std::span<const SplicedPayload> m_payloads;
};

Result<std::string> serializeWithPlaceholders(onnx::ModelProto& model,
    std::span<const SplicedPayload> payloads, const Nonce& nonce, const std::filesystem::path& path)
{
    Placeholders placeholders(payloads, nonce);
    std::string out;
    google::protobuf::io::StringOutputStream stream(&out);
    auto size = serialize(model, stream, path);
    if (!size)
        return size.error();
    return out;
}

} // namespace

Result<WrittenModel> writeModel(onnx::ModelProto& model, int fd, const std::filesystem::path& path,
    std::span<const SplicedPayload> payloads, const PayloadCopier& copy,
    const ElidedElements* leftOut)
{
    WrittenModel written;
    if (leftOut && leftOut->empty())
        leftOut = nullptr;
    if (payloads.empty() && !leftOut) {
        auto bytes = serializeTo(model, fd, path);
        if (!bytes)
            return bytes.error();
        written.bytes = *bytes;
        if (Status s = fsyncFile(fd, path); !s)
            return s.error();
        return written;
    }

    const Nonce nonce = freshNonce();
    auto serialized = serializeWithPlaceholders(model, payloads, nonce, path);
    if (!serialized)
        return serialized.error();
    std::vector<int> seen(payloads.size(), 0);
    const PayloadRule rule
        = [&](std::span<const std::byte> value) -> std::optional<PayloadReplacement> {
        if (value.size() != kMarkerBytes
            || std::memcmp(value.data(), nonce.data(), kNonceBytes) != 0)
            return std::nullopt;
        uint64_t index = 0;
        for (int i = 0; i < 8; ++i)
            index |= static_cast<uint64_t>(value[kNonceBytes + static_cast<size_t>(i)]) << (8 * i);
        if (index >= payloads.size())
            return std::nullopt;
        ++seen[index];
        return PayloadReplacement{payloads[index].length, static_cast<size_t>(index)};
    };
    auto spliced = spliceModel(std::as_bytes(std::span(serialized->data(), serialized->size())),
        path.string(), rule, leftOut);
    std::string().swap(*serialized);
    if (!spliced)
        return spliced.error();
    for (size_t i = 0; i < seen.size(); ++i)
        if (seen[i] != 1) // a tensor the wire walk does not reach (or reaches twice)
            return Error::internal(path.string() + ": internal error: the raw_data of tensor '"
                + payloads[i].tensor->name() + "' was found " + std::to_string(seen[i])
                + " times while writing the model");
    if (spliced->size > static_cast<uint64_t>(INT_MAX))
        return tooLarge(path, spliced->size);

    // Skeleton bytes and payloads in file order.
    written.payloadOffsets.resize(payloads.size());
    const std::string& bytes = spliced->bytes;
    uint64_t from = 0, out = 0;
    auto writeBytes = [&](uint64_t to) -> Status {
        std::span<const std::byte> piece(
            reinterpret_cast<const std::byte*>(bytes.data()) + from, to - from);
        if (Status s = pwriteAll(fd, piece, out, path); !s)
            return s;
        out += to - from;
        from = to;
        return {};
    };
    for (const PayloadInsert& insert : spliced->inserts) {
        if (Status s = writeBytes(insert.at); !s)
            return s.error();
        written.payloadOffsets[insert.id] = out;
        if (Status s = copy(insert.id, fd, out); !s)
            return s.error();
        out += payloads[insert.id].length;
    }
    if (Status s = writeBytes(bytes.size()); !s)
        return s.error();
    if (out != spliced->size)
        return Error::internal(path.string() + ": internal error: wrote " + std::to_string(out)
            + " bytes of a " + std::to_string(spliced->size) + "-byte model");
    if (Status s = fsyncFile(fd, path); !s)
        return s.error();
    written.bytes = out;
    return written;
}

} // namespace repack
