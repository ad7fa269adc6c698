#include "file_identity.h"

#include "posix_file.h"

#include <cerrno>
#include <cstring>
#include <string>

#include <sys/stat.h>

namespace fs = std::filesystem;

namespace repack {

FileId fileIdOf(const struct stat& st)
{
    return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

FileIdentity identityOf(const struct stat& st)
{
    return {fileIdOf(st), static_cast<uint64_t>(st.st_size),
        static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

FileStamp stampOf(const struct stat& st)
{
    return {
        identityOf(st), static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
}

Result<FileIdentity> identityOf(int fd)
{
    struct stat st { };
    if (::fstat(fd, &st) != 0)
        return Error::io(std::string("cannot stat file descriptor: ") + std::strerror(errno));
    return identityOf(st);
}

std::optional<FileId> fileIdOf(const fs::path& path)
{
    struct stat st { };
    if (::stat(path.c_str(), &st) != 0)
        return std::nullopt;
    return fileIdOf(st);
}

bool namesFile(const fs::path& path, const FileIdentity& identity)
{
    auto fd = UniqueFd::openRead(path);
    if (!fd)
        return false;
    auto now = identityOf(fd->get());
    return now && *now == identity;
}

Sameness sameFile(const fs::path& a, const fs::path& b)
{
    const auto idA = fileIdOf(a);
    const auto idB = fileIdOf(b);
    if (!idA || !idB)
        return Sameness::CouldNotTell;
    return *idA == *idB ? Sameness::Same : Sameness::Different;
}

bool samePathOrFile(const fs::path& a, const fs::path& b)
{
    switch (sameFile(a, b)) {
    case Sameness::Same:
        return true;
    case Sameness::Different:
        return false;
    case Sameness::CouldNotTell:
        break;
    }
    std::error_code ec;
    return fs::absolute(a, ec).lexically_normal() == fs::absolute(b, ec).lexically_normal();
}

} // namespace repack
