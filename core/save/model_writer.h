// Writing a ModelProto to a file descriptor, streamed, with every I/O error reported.
// Payloads that live in files (raw_data left in the source .onnx, external data coming back
// inline) are spliced in file to file: writing a model never holds its weights in memory.
#pragma once

#include "core/model/wire_scan.h"
#include "core/result.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <vector>

namespace onnx {
class ModelProto;
class TensorProto;
} // namespace onnx

namespace repack {

// A tensor whose raw_data is written from somewhere else than its proto (where it is empty).
struct SplicedPayload {
    onnx::TensorProto* tensor = nullptr;
    uint64_t length = 0;
};
// Writes all `length` bytes of payload `index` into `fd` at `offset`.
using PayloadCopier = std::function<Status(size_t index, int fd, uint64_t offset)>;

struct WrittenModel {
    uint64_t bytes = 0; // size of the file
    std::vector<uint64_t> payloadOffsets; // where each spliced payload's bytes start
};

// Serializes `model` into `fd` (an empty file at `path`) and syncs it: byte for byte what
// protobuf's deterministic serialization gives with every spliced payload in its tensor's
// raw_data. Fails before writing when the model would pass protobuf's 2 GiB limit. The model
// is unchanged afterwards (the spliced tensors hold placeholders while it is serialized).
// `leftOut`, when given, are initializers and nodes of the main graph left out of `model`
// (Model::loadProtosLeavingOut): each goes back at its place, its bytes as they were.
Result<WrittenModel> writeModel(onnx::ModelProto& model, int fd, const std::filesystem::path& path,
    std::span<const SplicedPayload> payloads = {}, const PayloadCopier& copy = {},
    const ElidedElements* leftOut = nullptr);

} // namespace repack
