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
    return finalPath.filename().string() + std::string(kTempMarker);
}

bool isHexSuffix(std::string_view text)
{
    return text.size() == 12
        && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
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

TempCleanup::~TempCleanup()
{
    for (const auto& path : m_paths)
        ::unlink(path.c_str());
}

} // namespace repack
