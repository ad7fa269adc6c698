// Writes a SyntheticModel to disk, streaming every weight through one fixed buffer: memory use
// stays bounded by the buffer plus the graph, whatever the weight size.
#pragma once

#include "synthetic_model.h"

#include "core/result.h"

#include <filesystem>
#include <string>

namespace repack::bench {

struct ExternalOptions {
    std::string dataName; // relative to the model's folder; empty: "<model>.data"
    uint64_t threshold = 1024; // tensors of at least this many bytes go external
    uint64_t alignment = 0; // 0: dense
    uint64_t alignThreshold = 1u << 20; // only tensors this big are aligned
};

// The .onnx with every tensor >= threshold in one data file beside it.
Status writeExternal(
    const SyntheticModel& model, const std::filesystem::path& path, const ExternalOptions& options);

// One self-contained .onnx with all weights in raw_data. Fails before writing anything when
// the result would reach the 2 GiB protobuf limit.
Status writeInline(const SyntheticModel& model, const std::filesystem::path& path);

} // namespace repack::bench
