#include "file_names.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <random>

namespace fs = std::filesystem;

namespace repack {
namespace {

std::string randomSuffix()
{
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(12, '0');
    uint64_t bits = rng();
    for (auto& c : out) {
        c = kHex[bits & 0xf];
        bits >>= 4;
    }
    return out;
}

std::string tempPrefix(const fs::path& finalPath)
{
    return finalPath.filename().string() + std::string(kTempMarker);
}

bool isHexSuffix(std::string_view text)
{
    return text.size() == 12
        && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool endsWith(std::string_view text, std::string_view suffix)
{
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool allDigits(std::string_view text)
{
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
    });
}

// "-00001-of-00003" somewhere in the name.
bool hasShardMarker(std::string_view name)
{
    for (size_t of = name.find("-of-"); of != std::string_view::npos;
         of = name.find("-of-", of + 1)) {
        const size_t dash = name.rfind('-', of == 0 ? 0 : of - 1);
        if (dash == std::string_view::npos || dash + 1 >= of)
            continue;
        size_t end = of + 4;
        while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end])))
            ++end;
        if (allDigits(name.substr(dash + 1, of - dash - 1)) && end > of + 4)
            return true;
    }
    return false;
}

} // namespace

std::string defaultDataFile(const fs::path& modelPath)
{
    return dataFileFor(modelPath, ".data");
}

std::string dataFileFor(const fs::path& modelPath, std::string_view suffix)
{
    return modelPath.filename().string() + std::string(suffix);
}

std::string shardName(const std::string& dataFile, size_t index, size_t count)
{
    if (count <= 1)
        return dataFile;
    char infix[48];
    std::snprintf(infix, sizeof infix, "-%05zu-of-%05zu", index + 1, count);
    // Before the file name's extension chain, as onnx_ir does since 1.1: the trailing ".ext"
    // parts that start with a letter ("model.onnx.data" -> "model" + ".onnx.data", but
    // "qwen2.5.onnx.data" keeps "qwen2.5"), never a dot in the folder part, and never the whole
    // name (".hidden.data" keeps ".hidden").
    const size_t nameStart = dataFile.find_last_of('/') + 1; // npos + 1 == 0
    size_t cut = dataFile.size();
    for (size_t dot; cut > nameStart && (dot = dataFile.rfind('.', cut - 1)) != std::string::npos
         && dot > nameStart && dot + 1 < cut
         && std::isalpha(static_cast<unsigned char>(dataFile[dot + 1]));)
        cut = dot;
    return dataFile.substr(0, cut) + infix + dataFile.substr(cut);
}

std::string chunkName(const std::string& dataFile, size_t index)
{
    return index == 0 ? dataFile : dataFile + "_" + std::to_string(index);
}

fs::path tempNameFor(const fs::path& finalPath)
{
    return finalPath.parent_path() / (tempPrefix(finalPath) + randomSuffix());
}

bool isTempName(const std::string& fileName)
{
    const size_t marker = fileName.rfind(kTempMarker);
    return marker != std::string::npos && marker > 0
        && isHexSuffix(std::string_view(fileName).substr(marker + kTempMarker.size()));
}

std::string finalNameOfTemp(const std::string& fileName)
{
    if (!isTempName(fileName))
        return {};
    std::string final = fileName.substr(0, fileName.rfind(kTempMarker));
    if (final.size() > 1 && final.front() == '.')
        final.erase(0, 1); // the hidden names of earlier versions
    return final;
}

// Names ONNX tools give external data files: *.data, *.onnx_data, *_data, *.bin, *.weights,
// *.extdata, numbered *.onnx_data_<N> / *.data_<N>, and shards "stem-00001-of-00003.ext".
FileType classifyFileName(const std::string& fileName)
{
    if (isTempName(fileName))
        return FileType::Temp;
    std::string lower = fileName;
    std::transform(lower.begin(), lower.end(), lower.begin(),
        [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (endsWith(lower, ".onnx"))
        return FileType::Model;
    return isDataName(fileName) ? FileType::Data : FileType::Other;
}

bool isDataName(std::string name)
{
    if (isTempName(name))
        return false;
    std::transform(name.begin(), name.end(), name.begin(),
        [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (std::string_view suffix : {".data", "_data", ".bin", ".weights", ".extdata"})
        if (endsWith(name, suffix))
            return true;
    // Numbered: "w.onnx_data_3", "w.data_3".
    const size_t underscore = name.rfind('_');
    if (underscore != std::string::npos && allDigits(std::string_view(name).substr(underscore + 1))
        && (endsWith(std::string_view(name).substr(0, underscore), ".data")
            || endsWith(std::string_view(name).substr(0, underscore), "_data")))
        return true;
    // Shards of other formats (safetensors, configs) are not ONNX external data.
    const std::string ext = fs::path(name).extension().string();
    for (std::string_view other : {".onnx", ".json", ".txt", ".md", ".py", ".safetensors"})
        if (ext == other)
            return false;
    return hasShardMarker(name);
}

Status checkDataFileName(const std::string& name)
{
    const fs::path path(name);
    if (name.empty())
        return Error{"the data file name is empty", ErrorKind::Usage};
    if (path.is_absolute())
        return Error{
            "data file '" + name + "' must be relative to the model's folder", ErrorKind::Usage};
    // A backslash is a folder separator to readers on Windows; an empty component is a typo.
    if (name.find('\\') != std::string::npos || name.find('\0') != std::string::npos)
        return Error{"data file '" + name + "' has a character not allowed in a file name",
            ErrorKind::Usage};
    if (name.find("//") != std::string::npos)
        return Error{"data file '" + name + "' has an empty path component", ErrorKind::Usage};
    for (const auto& part : path.lexically_normal())
        if (part == "..")
            return Error{
                "data file '" + name + "' must stay inside the model's folder", ErrorKind::Usage};
    const fs::path normal = path.lexically_normal();
    if (normal.filename().empty() || normal.filename() == "." || name.back() == '/')
        return Error{"data file '" + name + "' names a folder, not a file", ErrorKind::Usage};
    if (isTempName(normal.filename().string()))
        return Error{
            "data file '" + name + "' looks like a save's temporary file; choose another name",
            ErrorKind::Usage};
    return {};
}

} // namespace repack
