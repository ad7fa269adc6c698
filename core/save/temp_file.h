// Temporary files beside their final destination (same folder, so rename and link are atomic),
// named by tempNameFor (core/file_names.h) and removed unless kept.
#pragma once

#include "core/file_names.h"
#include "core/posix_file.h"
#include "core/result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace repack {

struct TempFile {
    std::filesystem::path path;
    UniqueFd fd;
};

// Creates a new, empty temporary file for `finalPath` in its folder.
Result<TempFile> createTempFor(const std::filesystem::path& finalPath);

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
