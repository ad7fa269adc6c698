#include "targets.h"

namespace repack {

const std::vector<Target>& targets()
{
    static const std::vector<Target> list = {
        {.name = "ort",
            .summary = "ONNX Runtime: model.onnx.data, tensors of 1 MiB and more aligned to 64 KiB "
                       "so they memory-map on Windows too",
            .dataSuffix = ".data",
            .alignment = kWindowsMapGranularity},
        {.name = "optimum",
            .summary = "Hugging Face Optimum: model.onnx_data, the name it exports and downloads",
            .dataSuffix = "_data"},
        {.name = "web",
            .summary = "transformers.js: model.onnx_data, model.onnx_data_1, ... each under "
                       "0x7fe00000 bytes, at most 100 chunks",
            .dataSuffix = "_data",
            .shardSize = kBrowserBufferLimit - 1,
            .shardNaming = ShardNaming::Chunks,
            .shardSizeIsLimit = true,
            .maxShards = kBrowserMaxChunks},
        {.name = "hub",
            .summary = "Hugging Face Hub uploads: model.onnx_data in shards of at most 5 GB "
                       "(model-00001-of-00002.onnx_data)",
            .dataSuffix = "_data",
            .shardSize = kHubShardBytes},
    };
    return list;
}

const Target* findTarget(std::string_view name)
{
    for (const Target& t : targets())
        if (t.name == name)
            return &t;
    return nullptr;
}

std::string targetNames(std::string_view separator)
{
    std::string out;
    for (const Target& t : targets())
        out.append(out.empty() ? "" : separator).append(t.name);
    return out;
}

std::string targetDataFile(const Target& target, const std::filesystem::path& modelPath)
{
    return dataFileFor(modelPath, target.dataSuffix);
}

void applyTarget(const Target& target, const std::filesystem::path& modelPath, SaveOptions& options)
{
    options.dataFile = targetDataFile(target, modelPath);
    options.dataSuffix = target.dataSuffix;
    options.alignment = target.alignment;
    options.alignThreshold = target.alignThreshold;
    options.shardSize = target.shardSize;
    options.shardNaming = target.shardNaming;
    options.shardSizeIsLimit = target.shardSizeIsLimit;
    options.maxShards = target.maxShards;
}

} // namespace repack
