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
    char infix[48];
    std::snprintf(infix, sizeof infix, "-%05zu-of-%05zu", index + 1, count);
    // Split the file name at its last dot as onnx_ir does (a leading dot counts too, unlike
    // fs::path::extension()), never a dot in the folder part.
    const size_t nameStart = dataFile.find_last_of('/') + 1; // npos + 1 == 0
    const size_t dot = dataFile.rfind('.');
    const size_t cut = dot != std::string::npos && dot >= nameStart ? dot : dataFile.size();
    return dataFile.substr(0, cut) + infix + dataFile.substr(cut);
}

} // namespace repack
