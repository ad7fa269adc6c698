// Saving an onnx.ModelProto without copying its weights first: the model's wire form goes into
// an anonymous memory file (memfd) with a hole where each large raw_data payload lies, and the
// core, indexing that file as a loaded one, reads each payload from the caller's proto when it
// writes it (Model::loadDetached with a PayloadLender). The proto is only read, never changed;
// it is read with the GIL held, and each payload is written once. Peak memory: the proto plus
// the payload being written.
#pragma once

#include "core/model/model.h"
#include "core/posix_file.h"

#include <pybind11/pybind11.h>

#include <filesystem>
#include <memory>
#include <vector>

namespace repack::python {

class LentPayloads {
public:
    // Writes the wire form of `proto` (an onnx.ModelProto) into a memfd, leaving out the
    // payloads of its raw_data of at least Model::kInFileMinBytes (of every TensorProto
    // onnx_repack._proto.tensors finds); called with the GIL held. Raises when it cannot; the
    // proto is never changed.
    static LentPayloads ofModel(pybind11::handle proto);
    // The same for a model whose graph holds `tensors` (onnx.TensorProto objects) as its
    // initializers, in order: what an external-data operation on them writes from.
    static LentPayloads ofTensors(const pybind11::list& tensors);
    ~LentPayloads();
    LentPayloads(LentPayloads&&) = default;
    LentPayloads(const LentPayloads&) = delete;
    LentPayloads& operator=(const LentPayloads&) = delete;

    // The model in the memfd, its external data resolved against `baseDir`, reading the
    // payloads left out from the proto: each read takes the GIL, gets the tensor's raw_data
    // and checks it still has the length the model was indexed with.
    std::unique_ptr<Model> load(const std::filesystem::path& baseDir) const;

private:
    // From onnx_repack._proto's (pieces, size): bytes, or (TensorProto, length) lent.
    explicit LentPayloads(const pybind11::tuple& skeleton);
    struct Lent {
        pybind11::object tensor; // the TensorProto
        uint64_t offset = 0; // of its payload in the memfd (a hole)
        uint64_t length = 0;
    };
    // The payload left out at `offset` of the memfd, or null when none starts there.
    static const Lent* lentAt(const std::vector<Lent>& lent, uint64_t offset);
    // Shared with the model's lender, which may outlive this; freed with the GIL held.
    std::shared_ptr<std::vector<Lent>> m_lent;
    UniqueFd m_memfd;
};

} // namespace repack::python
