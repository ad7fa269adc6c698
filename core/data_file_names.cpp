#include "data_file_names.h"

#include <cstdio>

namespace fs = std::filesystem;

namespace repack {

std::string defaultDataFile(const fs::path& modelPath)
{
    return modelPath.filename().string() + ".data";
}

std::string shardName(const std::string& dataFile, size_t index, size_t count)
{
    if (count <= 1)
        return dataFile;
    const fs::path path(dataFile);
    char suffix[48];
    std::snprintf(suffix, sizeof suffix, "-%05zu-of-%05zu", index + 1, count);
    fs::path out = path.parent_path() / (path.stem().string() + suffix + path.extension().string());
    return out.generic_string();
}

} // namespace repack
