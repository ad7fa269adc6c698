// How data files are named: the default name beside a model, and shard names (SPEC 5, 5a).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace repack {

// Default data file name for a model saved at `modelPath`: "<file name>.data".
std::string defaultDataFile(const std::filesystem::path& modelPath);

// The name of shard `index` (from 0) of `count` for data file `dataFile`; the plain name for a
// single file.
std::string shardName(const std::string& dataFile, size_t index, size_t count);

} // namespace repack
