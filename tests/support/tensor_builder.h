// TensorProtos of any dtype and shape, stored raw, in typed fields or as external references.
// Element sizes here come from the ONNX spec table below, not from core/dtype, so tests that
// use them check the core against an independent source.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fixtures {

// Packed byte size of `elements` elements of ONNX type `dtype` (strings: 0).
uint64_t packedBytes(int32_t dtype, uint64_t elements);
uint64_t elementCount(const std::vector<int64_t>& dims);

// `n` bytes of a recognisable pattern: byte i is (seed + i) mod 251.
std::string patternBytes(uint64_t n, uint8_t seed = 0);

// A tensor whose raw_data holds dtype x shape pattern bytes (or `bytes` when given).
onnx::TensorProto rawTensor(const std::string& name, int32_t dtype, std::vector<int64_t> dims,
    std::optional<std::string> bytes = std::nullopt);

// A tensor holding its values in the typed field ONNX prescribes for `dtype` (complex: two
// values per element; sub-byte types: one packed byte per int32; strings: "s<i>").
onnx::TensorProto typedTensor(const std::string& name, int32_t dtype, std::vector<int64_t> dims);

// Marks `tensor` EXTERNAL with the given keys; offset/length are written as given (strings,
// so tests can write malformed values). Does not touch raw_data.
void setExternal(onnx::TensorProto& tensor, const std::string& location,
    std::optional<std::string> offset, std::optional<std::string> length);
void addExternalKey(onnx::TensorProto& tensor, const std::string& key, const std::string& value);
// Adds two FLOAT initializers of `graph`, ext_a ([aFloats]) and ext_b ([bFloats]), stored back to
// back in the data file `location` (pattern bytes seeded `seed` and `seed` + 1): returns the
// bytes that file must hold.
std::string addExternalPair(onnx::GraphProto& graph, const std::string& location, int64_t aFloats,
    int64_t bFloats, uint8_t seed);

// A sparse tensor with `nnz` float values (raw) and int64 indices (raw) over dense `dims`.
onnx::SparseTensorProto sparseTensor(const std::string& valuesName, const std::string& indicesName,
    std::vector<int64_t> dims, int64_t nnz);

} // namespace fixtures
