#include "typed_data.h"

#include "core/dtype.h"

#include <onnx/onnx_pb.h>

#include <cstring>

namespace repack {
namespace {

template <typename Out, typename Field>
void appendAs(std::vector<std::byte>& out, const Field& field)
{
    const size_t start = out.size();
    out.resize(start + sizeof(Out) * static_cast<size_t>(field.size()));
    std::byte* p = out.data() + start;
    for (auto v : field) {
        const Out narrowed = static_cast<Out>(v);
        std::memcpy(p, &narrowed, sizeof(Out));
        p += sizeof(Out);
    }
}

} // namespace

Result<std::vector<std::byte>> typedDataToBytes(const onnx::TensorProto& t)
{
    std::vector<std::byte> out;
    switch (t.data_type()) {
    case dtype::Float:
    case dtype::Complex64:
        appendAs<float>(out, t.float_data());
        break;
    case dtype::Double:
    case dtype::Complex128:
        appendAs<double>(out, t.double_data());
        break;
    case dtype::Int64:
        appendAs<int64_t>(out, t.int64_data());
        break;
    case dtype::Int32:
        appendAs<int32_t>(out, t.int32_data());
        break;
    case dtype::Uint32:
        appendAs<uint32_t>(out, t.uint64_data());
        break;
    case dtype::Uint64:
        appendAs<uint64_t>(out, t.uint64_data());
        break;
    case dtype::Int16:
    case dtype::Uint16:
    case dtype::Float16:
    case dtype::Bfloat16:
        appendAs<uint16_t>(out, t.int32_data());
        break;
    case dtype::Int8:
    case dtype::Uint8:
    case dtype::Bool:
    case dtype::Float8E4M3FN:
    case dtype::Float8E4M3FNUZ:
    case dtype::Float8E5M2:
    case dtype::Float8E5M2FNUZ:
    case dtype::Float8E8M0:
    case dtype::Int4:
    case dtype::Uint4:
    case dtype::Float4E2M1:
        appendAs<uint8_t>(out, t.int32_data());
        break;
    default:
        return Error::corrupt(
            "data type " + std::to_string(t.data_type()) + " has no byte representation");
    }
    return out;
}

} // namespace repack
