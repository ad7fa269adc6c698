// How data files are named: the default name beside a model, and shard names (SPEC 5, 5a).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace repack {

// Default data file name for a model saved at `modelPath`: "<file name>.data".
std::string defaultDataFile(const std::filesystem::path& modelPath);

// The name of shard `index` (from 0) of `count` for data file `dataFile`; the plain name for a
// single file. The same names as onnx_ir's external-data sharding (`_get_shard_filename` in
// onnx/ir-py, src/onnx_ir/external_data.py), so both tools write and find the same files:
// "-NNNNN-of-NNNNN" (1-based, five digits or more) goes before the file name's last dot, or at
// the end when it has none: "w.bin" -> "w-00001-of-00003.bin", "model.onnx.data" ->
// "model.onnx-00001-of-00003.data", "model.onnx_data" -> "model-00001-of-00003.onnx_data".
// One deliberate difference: onnx_ir splits the whole relative path at its last dot, so a dot in
// a folder name ("v1.2/weights") would move its shards into another folder; here only the file
// name is split ("v1.2/weights-00001-of-00002").
std::string shardName(const std::string& dataFile, size_t index, size_t count);

} // namespace repack
