#include "aligned_input_stream.h"

#include <cerrno>
#include <unistd.h>

namespace repack {

AlignedInputStream::AlignedInputStream(int fd, std::filesystem::path path, size_t bufferBytes)
    : m_fd(fd)
    , m_path(std::move(path))
    , m_buffer(bufferBytes)
{
}

bool AlignedInputStream::Next(const void** data, int* size)
{
    if (m_available > 0) {
        *data = m_buffer.data() + (m_filled - m_available);
        *size = static_cast<int>(m_available);
        m_available = 0;
        return true;
    }
    ssize_t n;
    do {
        n = ::read(m_fd, m_buffer.data(), m_buffer.size());
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
        if (n < 0)
            m_error = systemMessage("cannot read", m_path);
        return false;
    }
    m_filled = static_cast<size_t>(n);
    m_position += n;
    *data = m_buffer.data();
    *size = static_cast<int>(n);
    return true;
}

void AlignedInputStream::BackUp(int count)
{
    m_available = static_cast<size_t>(count);
}

bool AlignedInputStream::Skip(int count)
{
    const void* data = nullptr;
    int size = 0;
    while (count > 0) {
        if (!Next(&data, &size))
            return false;
        if (size > count) {
            BackUp(size - count);
            return true;
        }
        count -= size;
    }
    return true;
}

} // namespace repack
