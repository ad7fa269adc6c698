#include "proto_payloads.h"

#include "errors.h"

#include "core/model/wire_scan.h"

#include <array>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>

namespace py = pybind11;
namespace fs = std::filesystem;

namespace repack::python {
namespace {

constexpr size_t kNonceBytes = 16;
// TensorProto.raw_data: field 9, length-delimited.
constexpr unsigned char kRawDataTag = 9 << 3 | 2;
using Nonce = std::array<unsigned char, kNonceBytes>;

// What a lent tensor's raw_data holds meanwhile: a random nonce and its index. No payload the
// proto holds by itself is taken for one (2^-128).
std::string marker(const Nonce& nonce, uint64_t index)
{
    std::string out(reinterpret_cast<const char*>(nonce.data()), nonce.size());
    for (int i = 0; i < 8; ++i)
        out.push_back(static_cast<char>((index >> (8 * i)) & 0xff));
    return out;
}

std::optional<uint64_t> markerIndex(const Nonce& nonce, std::span<const std::byte> payload)
{
    if (payload.size() != kNonceBytes + 8 || std::memcmp(payload.data(), nonce.data(), kNonceBytes))
        return std::nullopt;
    uint64_t index = 0;
    for (int i = 7; i >= 0; --i)
        index = index << 8 | static_cast<uint8_t>(payload[kNonceBytes + static_cast<size_t>(i)]);
    return index;
}

std::span<const std::byte> bytesOf(const py::bytes& data)
{
    return {reinterpret_cast<const std::byte*>(PyBytes_AS_STRING(data.ptr())),
        static_cast<size_t>(PyBytes_GET_SIZE(data.ptr()))};
}

} // namespace

LentPayloads::LentPayloads(py::handle proto)
{
    const py::list tensors = py::module_::import("onnx_repack._proto").attr("tensors")(proto);
    Nonce nonce;
    std::random_device random;
    for (auto& byte : nonce)
        byte = static_cast<unsigned char>(random());
    std::vector<py::bytes> held; // parallel to m_lent until written to the memfd
    m_restored = false;
    auto putBack = [&] { // the proto as it was, before anything was written
        for (size_t i = 0; i < m_lent.size(); ++i)
            m_lent[i].tensor.attr("raw_data") = held[i];
        m_lent.clear();
        m_restored = true;
    };
    try {
        for (py::handle t : tensors) {
            py::bytes data = t.attr("raw_data"); // this tensor's bytes, copied once
            const auto length = static_cast<uint64_t>(PyBytes_GET_SIZE(data.ptr()));
            if (length < Model::kInFileMinBytes)
                continue;
            t.attr("raw_data") = py::bytes(marker(nonce, m_lent.size())); // frees the proto's
            m_lent.push_back({py::reinterpret_borrow<py::object>(t), 0, length});
            held.push_back(std::move(data));
        }
        const std::string skeleton = proto.attr("SerializeToString")().cast<std::string>();
        const PayloadRule rule
            = [&](std::span<const std::byte> payload) -> std::optional<PayloadReplacement> {
            const auto index = markerIndex(nonce, payload);
            if (!index || *index >= m_lent.size())
                return std::nullopt;
            return PayloadReplacement{m_lent[*index].length, static_cast<size_t>(*index)};
        };
        auto spliced = spliceModel(
            std::as_bytes(std::span(skeleton.data(), skeleton.size())), "the proto", rule);
        if (!spliced)
            raise(spliced.error());
        // Every lent payload must go back in exactly once: a marker left in the model would be
        // saved as the tensor's bytes.
        std::vector<bool> placed(m_lent.size(), false);
        for (const auto& insert : spliced->inserts) {
            if (placed[insert.id])
                raise(Error::corrupt("the proto holds a tensor's raw_data twice"));
            placed[insert.id] = true;
        }
        if (std::find(placed.begin(), placed.end(), false) != placed.end())
            raise(Error::internal("the proto has a tensor where the core's index does not look"));

        m_memfd = UniqueFd(::memfd_create("onnx_repack-proto", MFD_CLOEXEC));
        if (!m_memfd.valid())
            raise(Error::internal(
                std::string("cannot create an anonymous memory file: ") + std::strerror(errno)));
        const fs::path where = "the model's memory file";
        uint64_t written = 0, from = 0;
        auto write = [&](std::span<const std::byte> bytes) {
            if (Status s = writeAll(m_memfd.get(), bytes, where); !s)
                raise(s.error());
            written += bytes.size();
        };
        const auto text = std::as_bytes(std::span(spliced->bytes.data(), spliced->bytes.size()));
        for (const auto& insert : spliced->inserts) {
            write(text.subspan(from, insert.at - from));
            from = insert.at;
            m_lent[insert.id].offset = written;
            write(bytesOf(held[insert.id]));
        }
        write(text.subspan(from));
    } catch (...) {
        putBack();
        throw;
    }
    // The memfd holds the payloads now: the copies taken from the proto go.
    held.clear();
}

LentPayloads::~LentPayloads()
{
    if (m_restored)
        return;
    try {
        restore();
    } catch (py::error_already_set& e) {
        e.discard_as_unraisable("onnx_repack: putting raw_data back into the proto");
    } catch (...) {
    }
}

std::unique_ptr<Model> LentPayloads::load(const fs::path& baseDir) const
{
    return take(Model::loadDetached("/proc/self/fd/" + std::to_string(m_memfd.get()), baseDir));
}

void LentPayloads::restore()
{
    if (m_restored)
        return;
    m_restored = true;
    std::string failed;
    size_t failures = 0;
    auto fail = [&](const std::string& why) {
        if (!failures++)
            failed = why;
    };
    // The memfd mapped: each payload goes back with the field header the model holds before
    // it (raw_data's tag and length), through TensorProto.MergeFromString: one copy, where
    // reading it out first and setting raw_data took two.
    struct stat st { };
    void* map = MAP_FAILED;
    if (::fstat(m_memfd.get(), &st) == 0 && st.st_size > 0)
        map = ::mmap(
            nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, m_memfd.get(), 0);
    const auto* bytes = static_cast<const unsigned char*>(map);
    for (const Lent& lent : m_lent) {
        try {
            std::string header(1, static_cast<char>(kRawDataTag));
            for (uint64_t v = lent.length;; v >>= 7) {
                header.push_back(static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
                if (v < 0x80)
                    break;
            }
            if (map == MAP_FAILED || lent.offset < header.size()
                || std::memcmp(bytes + lent.offset - header.size(), header.data(), header.size()))
                raise(Error::internal(
                    "the model's memory file does not hold a payload where it was put"));
            const uint64_t from = lent.offset - header.size();
            lent.tensor.attr("MergeFromString")(
                py::memoryview::from_memory(const_cast<unsigned char*>(bytes + from),
                    static_cast<py::ssize_t>(header.size() + lent.length), true));
            // Its memory goes back as the proto takes its bytes back: never both copies at once.
            ::fallocate(m_memfd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                static_cast<off_t>(lent.offset), static_cast<off_t>(lent.length));
        } catch (py::error_already_set& e) {
            fail(e.what());
        }
    }
    if (map != MAP_FAILED)
        ::munmap(map, static_cast<size_t>(st.st_size));
    if (failures)
        raise(Error::internal("the raw_data of " + std::to_string(failures)
            + " tensor(s) could not be put back into the proto (they hold a placeholder now): "
            + failed));
}

} // namespace repack::python
