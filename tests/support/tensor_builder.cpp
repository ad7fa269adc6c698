#include "tensor_builder.h"

namespace fixtures {
namespace {

// Bits per element by TensorProto.DataType number, from the ONNX IR spec (onnx.proto).
int bitsOf(int32_t dtype)
{
    switch (dtype) {
    case 1:
        return 32; // float
    case 2:
    case 3:
    case 9:
        return 8; // uint8, int8, bool
    case 4:
    case 5:
    case 10:
    case 16:
        return 16; // uint16, int16, float16, bfloat16
    case 6:
    case 12:
        return 32; // int32, uint32
    case 7:
    case 11:
    case 13:
    case 14:
        return 64; // int64, double, uint64, complex64
    case 15:
        return 128; // complex128
    case 17:
    case 18:
    case 19:
    case 20:
    case 24:
        return 8; // float8 variants, float8e8m0
    case 21:
    case 22:
    case 23:
        return 4; // uint4, int4, float4e2m1
    default:
        return 0; // undefined, string, unknown
    }
}

onnx::TensorProto header(const std::string& name, int32_t dtype, const std::vector<int64_t>& dims)
{
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(dtype);
    for (int64_t d : dims)
        t.add_dims(d);
    return t;
}

} // namespace

uint64_t packedBytes(int32_t dtype, uint64_t elements)
{
    const uint64_t bits = static_cast<uint64_t>(bitsOf(dtype));
    return (elements * bits + 7) / 8;
}

uint64_t elementCount(const std::vector<int64_t>& dims)
{
    uint64_t n = 1;
    for (int64_t d : dims)
        n *= static_cast<uint64_t>(d);
    return n;
}

std::string patternBytes(uint64_t n, uint8_t seed)
{
    std::string out(n, '\0');
    for (uint64_t i = 0; i < n; ++i)
        out[i] = static_cast<char>((seed + i) % 251);
    return out;
}

onnx::TensorProto rawTensor(const std::string& name, int32_t dtype, std::vector<int64_t> dims,
    std::optional<std::string> bytes)
{
    onnx::TensorProto t = header(name, dtype, dims);
    const auto seed = static_cast<uint8_t>(name.size());
    t.set_raw_data(bytes ? *bytes : patternBytes(packedBytes(dtype, elementCount(dims)), seed));
    return t;
}

onnx::TensorProto typedTensor(const std::string& name, int32_t dtype, std::vector<int64_t> dims)
{
    onnx::TensorProto t = header(name, dtype, dims);
    const uint64_t n = elementCount(dims);
    switch (dtype) {
    case 1:
        for (uint64_t i = 0; i < n; ++i)
            t.add_float_data(float(i) + 0.5f);
        break;
    case 14:
        for (uint64_t i = 0; i < 2 * n; ++i)
            t.add_float_data(float(i));
        break;
    case 11:
        for (uint64_t i = 0; i < n; ++i)
            t.add_double_data(double(i) + 0.25);
        break;
    case 15:
        for (uint64_t i = 0; i < 2 * n; ++i)
            t.add_double_data(double(i));
        break;
    case 7:
        for (uint64_t i = 0; i < n; ++i)
            t.add_int64_data(int64_t(i) - 3);
        break;
    case 12:
    case 13:
        for (uint64_t i = 0; i < n; ++i)
            t.add_uint64_data(i + 7);
        break;
    case 8:
        for (uint64_t i = 0; i < n; ++i)
            t.add_string_data("s" + std::to_string(i));
        break;
    case 21:
    case 22:
    case 23:
        for (uint64_t i = 0; i < packedBytes(dtype, n); ++i)
            t.add_int32_data(int32_t(i % 16));
        break;
    default:
        for (uint64_t i = 0; i < n; ++i)
            t.add_int32_data(int32_t(i % 100));
        break;
    }
    return t;
}

void addExternalKey(onnx::TensorProto& tensor, const std::string& key, const std::string& value)
{
    auto* entry = tensor.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
}

void setExternal(onnx::TensorProto& tensor, const std::string& location,
    std::optional<std::string> offset, std::optional<std::string> length)
{
    tensor.set_data_location(onnx::TensorProto::EXTERNAL);
    tensor.clear_external_data();
    addExternalKey(tensor, "location", location);
    if (offset)
        addExternalKey(tensor, "offset", *offset);
    if (length)
        addExternalKey(tensor, "length", *length);
}

std::string addExternalPair(onnx::GraphProto& graph, const std::string& location, int64_t aFloats,
    int64_t bFloats, uint8_t seed)
{
    const std::string a = patternBytes(static_cast<uint64_t>(aFloats) * 4, seed);
    const std::string b = patternBytes(static_cast<uint64_t>(bFloats) * 4, uint8_t(seed + 1));
    onnx::TensorProto& ta = *graph.add_initializer();
    ta = rawTensor("ext_a", onnx::TensorProto::FLOAT, {aFloats});
    ta.clear_raw_data();
    setExternal(ta, location, "0", std::to_string(a.size()));
    onnx::TensorProto& tb = *graph.add_initializer();
    tb = rawTensor("ext_b", onnx::TensorProto::FLOAT, {bFloats});
    tb.clear_raw_data();
    setExternal(tb, location, std::to_string(a.size()), std::to_string(b.size()));
    return a + b;
}

onnx::SparseTensorProto sparseTensor(const std::string& valuesName, const std::string& indicesName,
    std::vector<int64_t> dims, int64_t nnz)
{
    onnx::SparseTensorProto s;
    *s.mutable_values() = rawTensor(valuesName, 1, {nnz});
    std::string indices;
    for (int64_t i = 0; i < nnz; ++i) {
        const int64_t index = 2 * i; // little-endian int64, ascending
        indices.append(reinterpret_cast<const char*>(&index), sizeof index);
    }
    *s.mutable_indices() = rawTensor(indicesName, 7, {nnz}, indices);
    for (int64_t d : dims)
        s.add_dims(d);
    return s;
}

} // namespace fixtures
