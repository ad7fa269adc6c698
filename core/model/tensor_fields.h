// One TensorProto read from the wire, as protobuf would parse it (the last of a repeated
// singular field wins, packed and unpacked numbers both count), and what the index makes of it:
// its dtype, shape and sizes, and the problems they show. The tensor index (tensor_index.cpp)
// walks the graphs and hands each TensorProto's fields here; where the bytes live (inline,
// typed, external) stays the index's to decide.
#pragma once

#include "core/problem.h"
#include "tensor_info.h"
#include "wire_reader.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace repack {

// The fields of one TensorProto that the index needs, as protobuf would have parsed them.
struct TensorFields {
    std::vector<int64_t> dims;
    int32_t dataType = 0;
    bool external = false; // data_location == EXTERNAL
    std::string_view name;
    bool hasRaw = false;
    FileRange raw; // the last raw_data
    uint64_t typedCount = 0; // values in float_data, int32_data, ..., string_data
    uint64_t stringBytes = 0; // sum of the string_data lengths
    std::vector<std::pair<std::string_view, std::string_view>> externalData;

    void clear()
    {
        dims.clear();
        externalData.clear();
        dataType = 0;
        external = false;
        name = {};
        hasRaw = false;
        raw = {};
        typedCount = 0;
        stringBytes = 0;
    }
};

// Reads field `f` of a TensorProto into `t`; false, with the reader's error, on bytes protobuf
// would refuse.
bool readTensorField(wire::Reader& r, const wire::Field& f, TensorFields& t);

// The TensorInfo of `t`: its name, scope and kind as given, dtype, shape, element and byte
// counts; the problems of its dtype and shape added to `problems`. Storage is the caller's.
TensorInfo describeTensor(const TensorFields& t, std::string name, SharedString scope,
    TensorKind kind, std::vector<Problem>& problems);

// Inline data whose size disagrees with dtype x shape: `rawHeld` bytes of raw_data, or
// `typedCount` values of the typed fields.
void checkInlineSize(
    const TensorInfo& info, uint64_t rawHeld, uint64_t typedCount, std::vector<Problem>& problems);

// A problem of `info`, named by its qualified name.
void addProblem(std::vector<Problem>& problems, const TensorInfo& info, std::string_view code,
    std::string message, Severity severity = Severity::Error);

} // namespace repack
