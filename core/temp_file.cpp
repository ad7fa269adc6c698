#include "temp_file.h"

#include <cerrno>
#include <fcntl.h>
#include <random>
#include <unistd.h>

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
    return "." + finalPath.filename().string() + std::string(kTempMarker);
}

} // namespace

fs::path tempNameFor(const fs::path& finalPath)
{
    return finalPath.parent_path() / (tempPrefix(finalPath) + randomSuffix());
}

Result<TempFile> createTempFor(const fs::path& finalPath)
{
    for (int attempt = 0; attempt < 16; ++attempt) {
        fs::path path = tempNameFor(finalPath);
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0)
            return TempFile{std::move(path), UniqueFd(fd)};
        if (errno != EEXIST)
            return Error{
                systemMessage("cannot create a temporary file in", finalPath.parent_path())};
    }
    return Error{"cannot find a free temporary name in " + finalPath.parent_path().string()};
}

bool isTempName(const std::string& fileName)
{
    return !fileName.empty() && fileName.front() == '.'
        && fileName.find(kTempMarker) != std::string::npos;
}

std::string finalNameOfTemp(const std::string& fileName)
{
    if (!isTempName(fileName))
        return {};
    return fileName.substr(1, fileName.rfind(kTempMarker) - 1);
}

TempCleanup::~TempCleanup()
{
    for (const auto& path : m_paths)
        ::unlink(path.c_str());
}

size_t removeStaleTemps(const std::vector<fs::path>& finalPaths)
{
    size_t removed = 0;
    for (const auto& finalPath : finalPaths) {
        const std::string prefix = tempPrefix(finalPath);
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(finalPath.parent_path(), ec)) {
            if (entry.path().filename().string().rfind(prefix, 0) == 0
                && ::unlink(entry.path().c_str()) == 0)
                ++removed;
        }
    }
    return removed;
}

} // namespace repack
