// What an ONNX model's first bytes are, and the one error of a file that is no model at all:
// a web page served in its place, an archive, another format. Such a file is refused at its
// first bytes, locally and on a server alike, rather than read whole to find out.
#pragma once

#include "core/result.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace repack {

// "<name>: not an ONNX model (<found>)", kind Format: what was found, and where.
Error notAnOnnxModel(const std::string& name, const std::string& found);

// Whether `head`, the first bytes of the file `name` of `fileSize` bytes (a few dozen suffice;
// all of them when the file is shorter), can begin a serialized ModelProto: its first field is
// one a ModelProto has, with the wire type onnx.proto gives it, and a length-delimited one ends
// inside the file. Protobuf itself would take any well-formed bytes as unknown fields, but no
// writer of ONNX begins a model with one. Otherwise notAnOnnxModel, saying what the file begins
// with (its text, or its first bytes and the format they are the signature of).
Status checkModelStart(std::span<const std::byte> head, uint64_t fileSize, const std::string& name);

} // namespace repack
