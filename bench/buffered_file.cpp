#include "buffered_file.h"

#include <algorithm>
#include <cstring>
#include <unistd.h>

namespace repack::bench {

BufferedFile::BufferedFile(UniqueFd fd, std::filesystem::path path)
    : m_fd(std::move(fd))
    , m_path(std::move(path))
    , m_buffer(kBufferBytes)
{
}

Result<BufferedFile> BufferedFile::create(const std::filesystem::path& path)
{
    auto fd = UniqueFd::create(path, false);
    if (!fd)
        return fd.error();
    return BufferedFile(std::move(*fd), path);
}

Status BufferedFile::flush()
{
    if (m_used == 0)
        return {};
    Status status = writeAll(m_fd.get(), std::span(m_buffer.data(), m_used), m_path);
    m_used = 0;
    return status;
}

Status BufferedFile::write(std::span<const std::byte> data)
{
    while (!data.empty()) {
        const size_t chunk = std::min(data.size(), m_buffer.size() - m_used);
        std::memcpy(m_buffer.data() + m_used, data.data(), chunk);
        m_used += chunk;
        m_position += chunk;
        data = data.subspan(chunk);
        if (m_used == m_buffer.size())
            if (Status s = flush(); !s)
                return s;
    }
    return {};
}

Status BufferedFile::writeZeros(uint64_t count)
{
    while (count > 0) {
        const size_t chunk
            = static_cast<size_t>(std::min<uint64_t>(count, m_buffer.size() - m_used));
        std::memset(m_buffer.data() + m_used, 0, chunk);
        m_used += chunk;
        m_position += chunk;
        count -= chunk;
        if (m_used == m_buffer.size())
            if (Status s = flush(); !s)
                return s;
    }
    return {};
}

Status BufferedFile::writeFill(WeightFill& fill, uint64_t count)
{
    // Generate straight into the buffer. Every chunk but the tensor's last is a multiple of 8
    // bytes, so the bytes do not depend on where the buffer boundaries fall.
    while (count > 0) {
        size_t room = m_buffer.size() - m_used;
        if (count > room)
            room -= room % 8;
        if (room == 0) {
            if (Status s = flush(); !s)
                return s;
            continue;
        }
        const size_t chunk = static_cast<size_t>(std::min<uint64_t>(count, room));
        fill.fill(std::span(m_buffer.data() + m_used, chunk));
        m_used += chunk;
        m_position += chunk;
        count -= chunk;
        if (m_used == m_buffer.size())
            if (Status s = flush(); !s)
                return s;
    }
    return {};
}

Status BufferedFile::alignTo(uint64_t alignment)
{
    if (alignment <= 1 || m_position % alignment == 0)
        return {};
    return writeZeros(alignment - m_position % alignment);
}

Status BufferedFile::close()
{
    Status status = flush();
    if (m_fd.valid() && ::close(m_fd.release()) != 0 && status)
        return Error::io(systemMessage("cannot close", m_path));
    return status;
}

} // namespace repack::bench
