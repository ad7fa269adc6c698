// Save targets (`repack --target NAME`, the GUI's Target chooser): one word for the data file
// name, alignment and file limits a particular reader wants. Sources and rules: docs/targets.md.
#pragma once

#include "save_options.h"

#include "core/file_names.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace repack {

// Chrome's largest ArrayBuffer (0x7fe00000 bytes): transformers.js fetches each external data
// file into one, so every file must stay under it.
inline constexpr uint64_t kBrowserBufferLimit = 0x7fe00000;
// transformers.js reads at most this many chunks of one model's external data.
inline constexpr size_t kBrowserMaxChunks = 100;
// The shard size transformers uses for Hub uploads (max_shard_size "5GB": decimal gigabytes).
inline constexpr uint64_t kHubShardBytes = 5'000'000'000;
// ONNX Runtime on Windows maps a file view only at multiples of the allocation granularity.
inline constexpr uint64_t kWindowsMapGranularity = 64u << 10;

struct Target {
    std::string_view name;
    std::string_view summary; // one line, for --help and the GUI
    // Appended to the output model's file name for the data file: ".data" or "_data".
    std::string_view dataSuffix;
    uint64_t alignment = 4096;
    uint64_t alignThreshold = 1u << 20;
    uint64_t shardSize = 0;
    ShardNaming shardNaming = ShardNaming::Numbered;
    bool shardSizeIsLimit = false;
    size_t maxShards = 0;
};

// Every target, in the order --help and the GUI list them: ort, optimum, web, hub.
const std::vector<Target>& targets();
// The target called `name`, or null.
const Target* findTarget(std::string_view name);
// The target names joined by `separator`: "ort, optimum, web, hub".
std::string targetNames(std::string_view separator = ", ");

// Sets everything `target` decides in `options` for a model saved at `modelPath` (data file
// name, alignment, shards and their naming and limits); explicit options are applied after.
void applyTarget(
    const Target& target, const std::filesystem::path& modelPath, SaveOptions& options);

// The data file `target` names for a model saved at `modelPath`: "model.onnx_data".
std::string targetDataFile(const Target& target, const std::filesystem::path& modelPath);

} // namespace repack
