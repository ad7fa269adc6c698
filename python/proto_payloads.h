// Saving an onnx.ModelProto without holding its weights twice: the large raw_data payloads are
// moved out of the Python proto into an anonymous memory file (memfd) with the rest of the
// serialized model, which the core indexes and saves from as from a loaded file (its payloads
// spliced file to file), and moved back into the proto afterwards. Peak memory: the proto once
// plus the largest tensor, where serializing it whole took three times the proto.
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
    // Moves the payloads of `proto` out (raw_data of at least Model::kInFileMinBytes, in every
    // TensorProto onnx_repack._proto.tensors finds) and serializes the model into a memfd;
    // raises (with the proto as it was) when it cannot.
    explicit LentPayloads(pybind11::handle proto);
    // Puts every payload back (restore() when it was not called).
    ~LentPayloads();
    LentPayloads(const LentPayloads&) = delete;
    LentPayloads& operator=(const LentPayloads&) = delete;

    // The model in the memfd, its external data resolved against `baseDir`.
    std::unique_ptr<Model> load(const std::filesystem::path& baseDir) const;
    // Puts the payloads back into the proto, freeing the memfd's copy of each as it goes;
    // raises if one cannot be (the others are still put back).
    void restore();

private:
    struct Lent {
        pybind11::object tensor; // the TensorProto
        uint64_t offset = 0; // of its payload in the memfd
        uint64_t length = 0;
    };
    std::vector<Lent> m_lent;
    UniqueFd m_memfd;
    bool m_restored = true;
};

} // namespace repack::python
