#include "file_identity.h"

#include "posix_file.h"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace fs = std::filesystem;

namespace repack {

FileId fileIdOf(const struct stat& st)
{
    return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

namespace {

int64_t nanoseconds(const struct statx_timestamp& t)
{
    return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

FileStatus statusFrom(const struct statx& sx)
{
    FileStatus out;
    FileIdentity& identity = out.stamp.identity;
    // st_dev is makedev(major, minor): the same FileId as fileIdOf(struct stat).
    identity.id = {static_cast<uint64_t>(makedev(sx.stx_dev_major, sx.stx_dev_minor)),
        static_cast<uint64_t>(sx.stx_ino)};
    identity.size = sx.stx_size;
    identity.modifiedNs = nanoseconds(sx.stx_mtime);
    identity.bornNs = (sx.stx_mask & STATX_BTIME) ? nanoseconds(sx.stx_btime) : 0;
    out.stamp.changedNs = nanoseconds(sx.stx_ctime);
    out.regular = S_ISREG(sx.stx_mode);
    return out;
}

constexpr unsigned kStatxMask
    = STATX_TYPE | STATX_INO | STATX_SIZE | STATX_MTIME | STATX_CTIME | STATX_BTIME;

} // namespace

Result<FileStatus> statusOf(int fd)
{
    struct statx sx { };
    if (::statx(fd, "", AT_EMPTY_PATH, kStatxMask, &sx) != 0)
        return Error::io(std::string("cannot stat file descriptor: ") + std::strerror(errno));
    return statusFrom(sx);
}

std::optional<FileStatus> statusAt(const fs::path& path)
{
    struct statx sx { };
    if (::statx(AT_FDCWD, path.c_str(), 0, kStatxMask, &sx) != 0)
        return std::nullopt;
    return statusFrom(sx);
}

Result<FileIdentity> identityOf(int fd)
{
    auto status = statusOf(fd);
    if (!status)
        return status.error();
    return status->stamp.identity;
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
