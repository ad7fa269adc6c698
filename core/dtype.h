// ONNX element types by their TensorProto.DataType number, including those newer than the
// ONNX 1.12 protobuf classes we build against (float8 variants, int4/uint4, float4).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace repack::dtype {

enum : int32_t {
    Undefined = 0,
    Float = 1,
    Uint8 = 2,
    Int8 = 3,
    Uint16 = 4,
    Int16 = 5,
    Int32 = 6,
    Int64 = 7,
    String = 8,
    Bool = 9,
    Float16 = 10,
    Double = 11,
    Uint32 = 12,
    Uint64 = 13,
    Complex64 = 14,
    Complex128 = 15,
    Bfloat16 = 16,
    Float8E4M3FN = 17,
    Float8E4M3FNUZ = 18,
    Float8E5M2 = 19,
    Float8E5M2FNUZ = 20,
    Uint4 = 21,
    Int4 = 22,
    Float4E2M1 = 23,
    Float8E8M0 = 24,
};

// Lower-case ONNX name ("float", "bfloat16", "float8e4m3fn", ...), or "undefined(N)"-less
// nullopt for numbers we do not know.
std::optional<std::string_view> name(int32_t type);

// Bits one element occupies when packed (4 for int4/uint4/float4, 0 for string and unknown).
int bitsPerElement(int32_t type);

// Packed byte size of `elements` elements; nullopt for strings, unknown types or overflow.
std::optional<uint64_t> byteSize(int32_t type, uint64_t elements);

} // namespace repack::dtype
