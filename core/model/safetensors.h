// Data files that are at the same time .safetensors files and ONNX external data:
// an 8-byte little-endian header length, a JSON header naming each tensor's dtype, shape and
// data_offsets (relative to the end of the header), then the tensors' bytes back to back.
// ONNX references point past the header. Nothing here reads tensor bytes.
#pragma once

#include "compact.h"
#include "core/problem.h"
#include "core/result.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace repack {

struct TensorInfo;

// The safetensors reference caps the header at 100,000,000 bytes; so does this reader.
inline constexpr uint64_t kSafetensorsMaxHeader = 100'000'000;

struct SafetensorsEntry {
    std::string name;
    std::string dtype; // "F32", "BF16", ...
    Dims shape;
    uint64_t begin = 0; // absolute offsets in the file (header included)
    uint64_t end = 0;
};

struct SafetensorsHeader {
    uint64_t dataStart = 0; // 8 + the JSON header's length: where tensor bytes begin
    std::vector<SafetensorsEntry> entries; // in the order of their offsets
};

// The safetensors dtype of an ONNX element type, or empty when the format has none
// (strings, complex, 4-bit types).
std::string_view safetensorsDtype(int32_t onnxType);

// The name a tensor gets in a safetensors header: its name in the main graph, else its scope
// (without the leading "graph/") and name; not yet made unique.
std::string safetensorsName(const TensorInfo& tensor);

// Reads the header of the file `fd` is open on (`fileBytes` long). nullopt when the file does
// not start like a safetensors file (a header length that fits the file, then '{') or the
// header would cover `firstReference` (a tensor the model reads there: plain data; nothing more
// is read); an Error naming `path` when it does but the header is not valid safetensors.
Result<std::optional<SafetensorsHeader>> readSafetensorsHeader(int fd, uint64_t fileBytes,
    const std::filesystem::path& path, uint64_t firstReference = UINT64_MAX);

// Whether the reference reader can compute the size of `shape` of `dtype` (a checked product,
// dimension by dimension: [2^62, 2^62, 0] overflows although it is empty).
bool safetensorsShapeFits(std::string_view dtype, std::span<const int64_t> shape);

// The bytes a data file starts with: the length, then the JSON header of `entries` (offsets
// relative to the data start; empty file: "{}"), padded with spaces so tensors start at a
// multiple of 8, as the reference writer does.
std::string makeSafetensorsHeader(const std::vector<SafetensorsEntry>& entries);

// An upper bound of the header bytes one entry adds (name, dtype, shape, two offsets).
uint64_t safetensorsEntryBound(
    std::string_view name, std::string_view dtype, std::span<const int64_t> shape);
// Header bytes of a file with no entries, padding included: the length, "{}" and up to 7 spaces.
inline constexpr uint64_t kSafetensorsEmptyHeaderBound = 8 + 2 + 7;

// Reads the header of every data file the tensors reference (once per file) and keeps it on
// the DataFile when the file is a safetensors file; then checks that each reference agrees with
// it: an entry at exactly the tensor's range, with its dtype and shape. Disagreements are
// errors (code safetensors-mismatch) naming the file and the tensor; they never block reading or
// saving, which only use the ONNX references. A file that starts like safetensors but whose
// header is malformed gets a warning (safetensors-header).
void checkSafetensorsFiles(const std::vector<TensorInfo>& tensors, std::vector<Problem>& problems);

} // namespace repack
