// Temporary files beside their final destination (same folder, so rename and link are atomic),
// named "<final name>.repack-tmp-<12 hex digits>" and removed unless kept. The name never starts
// with '.': onnx's Python loader strips leading dots from locations, so a model that names a
// temporary during a save would not load there.
#pragma once

#include "posix_file.h"
#include "result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace repack {

inline constexpr std::string_view kTempMarker = ".repack-tmp-";

struct TempFile {
    std::filesystem::path path;
    UniqueFd fd;
};

// Creates a new, empty temporary file for `finalPath` in its folder.
Result<TempFile> createTempFor(const std::filesystem::path& finalPath);

// A fresh, unused name for a temporary hard link or rename in `finalPath`'s folder.
std::filesystem::path tempNameFor(const std::filesystem::path& finalPath);

// True for names made by createTempFor/tempNameFor (and the ".<name>.repack-tmp-<hex>" names of
// earlier versions, so their leftovers are recognised too).
bool isTempName(const std::string& fileName);
// The final file name a temporary name stands for ("" when `fileName` is not one).
std::string finalNameOfTemp(const std::string& fileName);

// Paths unlinked when the cleanup goes out of scope, unless released.
class TempCleanup {
public:
    ~TempCleanup();
    void add(std::filesystem::path path) { m_paths.push_back(std::move(path)); }
    void release() { m_paths.clear(); }

private:
    std::vector<std::filesystem::path> m_paths;
};

} // namespace repack
