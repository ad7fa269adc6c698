// Walks a serialized model at the protobuf wire level and lists every tensor that carries data
// (SPEC section 2): initializers and sparse initializers of the main graph and of subgraphs at
// any depth, tensors in node attributes, and functions. Scopes: "graph",
// "graph/<node name or #index>/<attribute>" (GRAPHS attributes add "[i]"),
// "function:<domain>:<name>". No protobuf object is built: a model of 100,000 tensors is
// indexed without a TensorProto or NodeProto per tensor (core/model/model.h parses protos only when
// a save needs them). Fields are read as protobuf reads them: a singular message given twice
// is one message, the last of a singular scalar wins, a field of an unexpected wire type is
// an unknown field.
#pragma once

#include "core/problem.h"
#include "core/result.h"
#include "tensor_info.h"

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace onnx {
class ModelProto;
class TensorProto;
} // namespace onnx

namespace repack {

// The model's own fields that reports show.
struct ModelHeader {
    int64_t irVersion = 0;
    std::string producerName;
    std::string producerVersion;
    std::vector<std::pair<std::string, int64_t>> opsets; // domain ("" for ai.onnx), version
};

struct TensorIndex {
    std::vector<TensorInfo> tensors; // declaration order; TensorInfo::proto is null
    std::vector<Problem> problems; // dims, dtypes, inline sizes, external keys, duplicate names
    ModelHeader header;
    bool hasGraph = false;
    size_t functionCount = 0;
    // Tensors held in typed fields (float_data, ...): the byte ranges of their TensorProto,
    // which protobuf merges in this order, by tensor position.
    std::vector<std::pair<size_t, std::vector<FileRange>>> typedSpans;
};

// Decides where a tensor's raw_data is held: given the tensor's position and its raw_data
// payload's range in the indexed bytes, the range to keep as TensorInfo::inlineRange, or
// nullopt for none. The size check counts the kept range's length when there is one.
using RawPayloadRule = std::function<std::optional<FileRange>(size_t tensor, FileRange payload)>;

// Told, now and then, which bytes [offset, offset + length) the walk has passed, for a caller
// that maps the file to give their pages back.
using ReleaseRule = std::function<void(uint64_t offset, uint64_t length)>;

// Indexes the serialized ModelProto `bytes` (tensors, graph-build inputs, initializers no node
// uses, duplicate names, the header). Malformed wire data where the index looks is an error
// naming `fileName` and the byte; protobuf may still refuse fields the index does not read.
Result<TensorIndex> indexTensors(std::span<const std::byte> bytes, const std::string& fileName,
    const RawPayloadRule& raw, const ReleaseRule& release = {});

// The locations external tensors of the serialized ModelProto `bytes` name (distinct, sorted),
// read as indexTensors reads them but with no index built: what a folder scan asks of every
// other model, at a few bytes per tensor instead of an index entry.
struct ExternalLocations {
    std::vector<std::string> locations;
    bool isModel = false; // it has a graph or functions
};
Result<ExternalLocations> externalLocations(
    std::span<const std::byte> bytes, const std::string& fileName, const ReleaseRule& release = {});

} // namespace repack
