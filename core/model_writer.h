// Writing a ModelProto to a file descriptor, streamed, with every I/O error reported.
#pragma once

#include "result.h"

#include <cstdint>
#include <filesystem>

namespace onnx {
class ModelProto;
}

namespace repack {

// Serializes `model` into `fd` (an empty file at `path`) and syncs it. Returns the byte count.
// Fails before writing when the model would pass protobuf's 2 GiB limit.
Result<uint64_t> writeModel(
    const onnx::ModelProto& model, int fd, const std::filesystem::path& path);

} // namespace repack
