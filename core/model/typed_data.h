// Conversion between a tensor's typed repeated fields (float_data, int32_data, ...) and the
// little-endian byte layout of raw_data and external data.
#pragma once

#include "core/result.h"

#include <cstddef>
#include <vector>

namespace onnx {
class TensorProto;
}

namespace repack {

// The bytes raw_data would hold for a tensor stored in typed fields.
Result<std::vector<std::byte>> typedDataToBytes(const onnx::TensorProto& tensor);

} // namespace repack
