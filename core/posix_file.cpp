#include "posix_file.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

namespace repack {

std::string systemMessage(std::string_view what, const std::filesystem::path& path, int err)
{
    if (err < 0)
        err = errno;
    return std::string(what) + " " + path.string() + ": " + std::strerror(err);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept
{
    if (this != &other) {
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = other.release();
    }
    return *this;
}

UniqueFd::~UniqueFd()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

Result<UniqueFd> UniqueFd::openRead(const std::filesystem::path& path)
{
    // Non-blocking, so that a FIFO (or a device) put where a model or data file was expected
    // is refused instead of waiting forever for a writer; regular files ignore the flag.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        const int err = errno;
        return Error{systemMessage("cannot open", path, err),
            err == ENOENT ? ErrorKind::NotFound : ErrorKind::Io};
    }
    UniqueFd file(fd);
    struct stat st { };
    if (::fstat(fd, &st) != 0)
        return Error::io(systemMessage("cannot stat", path));
    if (S_ISDIR(st.st_mode))
        return Error::usage(path.string() + ": is a directory, not a file");
    if (!S_ISREG(st.st_mode))
        return Error::usage(path.string() + ": not a regular file (a pipe, socket or device)");
    if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
        return Error::io(systemMessage("cannot open", path));
    return file;
}

Result<UniqueFd> UniqueFd::create(const std::filesystem::path& path, bool exclusive)
{
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
    int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0)
        return Error::io(systemMessage("cannot create", path));
    return UniqueFd(fd);
}

Result<UniqueFd> UniqueFd::openDirectory(const std::filesystem::path& path)
{
    int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return Error::io(systemMessage("cannot open directory", path));
    return UniqueFd(fd);
}

Result<uint64_t> UniqueFd::size() const
{
    struct stat st { };
    if (::fstat(m_fd, &st) != 0)
        return Error::io(std::string("cannot stat file descriptor: ") + std::strerror(errno));
    return static_cast<uint64_t>(st.st_size);
}

AlignedBuffer::AlignedBuffer(size_t bytes)
{
    constexpr size_t kPage = 4096;
    m_size = (bytes + kPage - 1) / kPage * kPage;
    m_data.reset(static_cast<std::byte*>(std::aligned_alloc(kPage, m_size)));
    if (!m_data)
        throw std::bad_alloc();
}

void AlignedBuffer::Free::operator()(std::byte* p) const
{
    std::free(p);
}

Status preadExact(
    int fd, std::span<std::byte> buffer, uint64_t offset, const std::filesystem::path& path)
{
    size_t done = 0;
    while (done < buffer.size()) {
        ssize_t n = ::pread(
            fd, buffer.data() + done, buffer.size() - done, static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return Error::io(systemMessage("cannot read", path));
        }
        if (n == 0)
            return Error::corrupt(path.string() + ": file ended at byte "
                + std::to_string(offset + done) + ", expected data up to byte "
                + std::to_string(offset + buffer.size()));
        done += static_cast<size_t>(n);
    }
    return {};
}

Status writeAll(int fd, std::span<const std::byte> data, const std::filesystem::path& path)
{
    size_t done = 0;
    while (done < data.size()) {
        ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return Error::io(systemMessage("cannot write", path));
        }
        done += static_cast<size_t>(n);
    }
    return {};
}

Status pwriteAll(
    int fd, std::span<const std::byte> data, uint64_t offset, const std::filesystem::path& path)
{
    size_t done = 0;
    while (done < data.size()) {
        ssize_t n = ::pwrite(
            fd, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return Error::io(systemMessage("cannot write", path));
        }
        done += static_cast<size_t>(n);
    }
    return {};
}

Status fsyncFile(int fd, const std::filesystem::path& path)
{
    if (::fsync(fd) != 0)
        return Error::io(systemMessage("cannot flush", path));
    return {};
}

Status fsyncDirectory(const std::filesystem::path& dir)
{
    auto fd = UniqueFd::openDirectory(dir);
    if (!fd)
        return fd.error();
    return fsyncFile(fd->get(), dir);
}

} // namespace repack
