#include "proto_payloads.h"

#include "errors.h"

#include <algorithm>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace py = pybind11;
namespace fs = std::filesystem;

namespace repack::python {
namespace {

std::span<const std::byte> bytesOf(const py::bytes& data)
{
    return {reinterpret_cast<const std::byte*>(PyBytes_AS_STRING(data.ptr())),
        static_cast<size_t>(PyBytes_GET_SIZE(data.ptr()))};
}

// A Python object held from C++ code that may drop it without the GIL.
std::shared_ptr<const void> holdWithGil(py::object object)
{
    return std::shared_ptr<const void>(new py::object(std::move(object)), [](const void* held) {
        py::gil_scoped_acquire gil;
        delete static_cast<const py::object*>(held);
    });
}

} // namespace

LentPayloads LentPayloads::ofModel(py::handle proto)
{
    return LentPayloads(py::module_::import("onnx_repack._proto")
                            .attr("skeleton")(proto, Model::kInFileMinBytes)
                            .cast<py::tuple>());
}

LentPayloads LentPayloads::ofTensors(const py::list& tensors)
{
    return LentPayloads(py::module_::import("onnx_repack._proto")
                            .attr("initializers_skeleton")(tensors, Model::kInFileMinBytes)
                            .cast<py::tuple>());
}

LentPayloads::LentPayloads(const py::tuple& skeleton)
    : m_lent(new std::vector<Lent>, [](std::vector<Lent>* lent) {
        py::gil_scoped_acquire gil;
        delete lent;
    })
{
    const auto pieces = skeleton[0].cast<py::list>();
    m_memfd = UniqueFd(::memfd_create("onnx_repack-proto", MFD_CLOEXEC));
    if (!m_memfd.valid())
        raise(Error::internal(
            std::string("cannot create an anonymous memory file: ") + std::strerror(errno)));
    const fs::path where = "the model's memory file";
    uint64_t at = 0;
    for (py::handle piece : pieces) {
        if (py::isinstance<py::bytes>(piece)) {
            const auto bytes = bytesOf(py::reinterpret_borrow<py::bytes>(piece));
            if (Status s = pwriteAll(m_memfd.get(), bytes, at, where); !s)
                raise(s.error());
            at += bytes.size();
            continue;
        }
        const auto lent = piece.cast<py::tuple>();
        const auto length = lent[1].cast<uint64_t>();
        m_lent->push_back({py::reinterpret_borrow<py::object>(lent[0]), at, length});
        at += length; // a hole: no memory, never read
    }
    if (::ftruncate(m_memfd.get(), static_cast<off_t>(at)) != 0)
        raise(Error::internal(
            std::string("cannot size the model's memory file: ") + std::strerror(errno)));
    if (at != skeleton[1].cast<uint64_t>())
        raise(Error::internal("the proto's pieces do not add up to its size"));
}

LentPayloads::~LentPayloads() = default;

const LentPayloads::Lent* LentPayloads::lentAt(const std::vector<Lent>& lent, uint64_t offset)
{
    const auto it = std::lower_bound(
        lent.begin(), lent.end(), offset, [](const Lent& l, uint64_t at) { return l.offset < at; });
    return it != lent.end() && it->offset == offset ? &*it : nullptr;
}

std::unique_ptr<Model> LentPayloads::load(const fs::path& baseDir) const
{
    std::shared_ptr<const std::vector<Lent>> lent = m_lent;
    // A payload in a message the proto's wire form holds whole (one with fields this onnx does
    // not know) is in the memfd itself: read from there. The lender keeps its own descriptor.
    auto memfd = std::make_shared<const UniqueFd>(::dup(m_memfd.get()));
    if (!memfd->valid())
        raise(Error::internal(
            std::string("cannot keep the model's memory file open: ") + std::strerror(errno)));
    PayloadLender lender = [lent, memfd](FileRange range) -> Result<TensorBytes> {
        const Lent* it = lentAt(*lent, range.offset);
        if (!it) {
            std::vector<std::byte> bytes(range.length);
            if (Status s = preadExact(memfd->get(), bytes, range.offset, "the model's memory file");
                !s)
                return s.error();
            return TensorBytes::own(std::move(bytes));
        }
        if (it->length != range.length)
            return Error::internal("the proto's payload at " + std::to_string(range.offset)
                + " holds " + std::to_string(it->length) + " bytes, the model reads "
                + std::to_string(range.length));
        py::gil_scoped_acquire gil; // the proto is read with the GIL held, as Python reads it
        try {
            py::bytes data = it->tensor.attr("raw_data");
            const auto bytes = bytesOf(data);
            if (bytes.size() != it->length)
                return Error::changed("the raw_data of tensor '"
                    + py::str(it->tensor.attr("name")).cast<std::string>() + "' holds "
                    + std::to_string(bytes.size()) + " bytes now, " + std::to_string(it->length)
                    + " when the save began: the proto changed while it was saved");
            // A bytes object never changes: it is read without the GIL, held until done.
            return TensorBytes::lent(bytes, holdWithGil(std::move(data)));
        } catch (const std::exception& e) { // never through the core
            return Error::internal(std::string("reading the proto's raw_data: ") + e.what());
        }
    };
    auto model = take(Model::loadDetached(
        "/proc/self/fd/" + std::to_string(m_memfd.get()), baseDir, std::move(lender)));
    // Every payload left out is one the model reads, at its place and length: one it parsed
    // instead would be a hole's zeros. (Payloads not left out lie in the memfd.)
    std::vector<bool> read(m_lent->size(), false);
    for (const TensorInfo& t : model->tensors()) {
        if (t.storage != Storage::Raw || !t.inlineRange
            || t.inlineRange->length < Model::kInFileMinBytes)
            continue;
        const Lent* it = lentAt(*m_lent, t.inlineRange->offset);
        if (!it)
            continue;
        if (it->length != t.inlineRange->length)
            raise(Error::internal(t.qualifiedName()
                + ": the core's index finds a payload of another length than the proto's"));
        read[static_cast<size_t>(it - m_lent->data())] = true;
    }
    if (std::find(read.begin(), read.end(), false) != read.end())
        raise(Error::internal("the proto has a tensor where the core's index does not look"));
    return model;
}

} // namespace repack::python
