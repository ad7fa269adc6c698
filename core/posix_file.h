// Thin RAII wrappers over POSIX file descriptors, with errors as values that name the file.
#pragma once

#include "result.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

namespace repack {

// "<what> <path>: <strerror(errno)>"
std::string systemMessage(std::string_view what, const std::filesystem::path& path, int err = -1);

class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd)
        : m_fd(fd)
    {
    }
    UniqueFd(UniqueFd&& other) noexcept
        : m_fd(other.release())
    {
    }
    UniqueFd& operator=(UniqueFd&& other) noexcept;
    ~UniqueFd();

    static Result<UniqueFd> openRead(const std::filesystem::path& path);
    // Creates (or truncates) a file for writing with mode 0644 minus umask.
    static Result<UniqueFd> create(const std::filesystem::path& path, bool exclusive);
    static Result<UniqueFd> openDirectory(const std::filesystem::path& path);

    int get() const { return m_fd; }
    bool valid() const { return m_fd >= 0; }
    int release()
    {
        int fd = m_fd;
        m_fd = -1;
        return fd;
    }

    Result<uint64_t> size() const;

private:
    int m_fd = -1;
};

// A page-aligned I/O buffer: the kernel copies into page-aligned memory several times faster
// than into malloc's usual 16-byte-offset blocks.
class AlignedBuffer {
public:
    explicit AlignedBuffer(size_t bytes);
    std::span<std::byte> span() const { return {m_data.get(), m_size}; }
    size_t size() const { return m_size; }
    std::byte* data() const { return m_data.get(); }

private:
    struct Free {
        void operator()(std::byte* p) const;
    };
    std::unique_ptr<std::byte, Free> m_data;
    size_t m_size = 0;
};

// Reads exactly buffer.size() bytes at offset; a short file is an error naming `path`.
Status preadExact(
    int fd, std::span<std::byte> buffer, uint64_t offset, const std::filesystem::path& path);
Status writeAll(int fd, std::span<const std::byte> data, const std::filesystem::path& path);
// Writes all of `data` at `offset`, leaving the file position alone.
Status pwriteAll(
    int fd, std::span<const std::byte> data, uint64_t offset, const std::filesystem::path& path);
Status fsyncFile(int fd, const std::filesystem::path& path);
Status fsyncDirectory(const std::filesystem::path& dir);

} // namespace repack
