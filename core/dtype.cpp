#include "dtype.h"

#include <array>
#include <limits>

namespace repack::dtype {
namespace {

struct Info {
    std::string_view name;
    int bits;
};

constexpr std::array<Info, 25> kTypes = {{
    {"undefined", 0},
    {"float", 32},
    {"uint8", 8},
    {"int8", 8},
    {"uint16", 16},
    {"int16", 16},
    {"int32", 32},
    {"int64", 64},
    {"string", 0},
    {"bool", 8},
    {"float16", 16},
    {"double", 64},
    {"uint32", 32},
    {"uint64", 64},
    {"complex64", 64},
    {"complex128", 128},
    {"bfloat16", 16},
    {"float8e4m3fn", 8},
    {"float8e4m3fnuz", 8},
    {"float8e5m2", 8},
    {"float8e5m2fnuz", 8},
    {"uint4", 4},
    {"int4", 4},
    {"float4e2m1", 4},
    {"float8e8m0", 8},
}};

const Info* find(int32_t type)
{
    if (type < 0 || static_cast<size_t>(type) >= kTypes.size())
        return nullptr;
    return &kTypes[static_cast<size_t>(type)];
}

} // namespace

std::optional<std::string_view> name(int32_t type)
{
    if (const Info* info = find(type))
        return info->name;
    return std::nullopt;
}

int bitsPerElement(int32_t type)
{
    const Info* info = find(type);
    return info ? info->bits : 0;
}

std::optional<uint64_t> byteSize(int32_t type, uint64_t elements)
{
    const int bits = bitsPerElement(type);
    if (bits == 0)
        return std::nullopt;
    if (bits < 8) // sub-byte types pack 8/bits elements a byte, the last byte padded
        return elements / (8 / bits) + (elements % (8 / bits) ? 1 : 0);
    const uint64_t width = static_cast<uint64_t>(bits / 8);
    if (elements > std::numeric_limits<uint64_t>::max() / width)
        return std::nullopt;
    return elements * width;
}

} // namespace repack::dtype
