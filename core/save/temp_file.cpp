#include "temp_file.h"

#include "core/file_names.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace repack {

Result<TempFile> createTempFor(const fs::path& finalPath)
{
    for (int attempt = 0; attempt < 16; ++attempt) {
        fs::path path = tempNameFor(finalPath);
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0)
            return TempFile{std::move(path), UniqueFd(fd)};
        if (errno != EEXIST)
            return Error::io(
                systemMessage("cannot create a temporary file in", finalPath.parent_path()));
    }
    return Error::io("cannot find a free temporary name in " + finalPath.parent_path().string());
}

TempCleanup::~TempCleanup()
{
    for (const auto& path : m_paths)
        ::unlink(path.c_str());
}

} // namespace repack
