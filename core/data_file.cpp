#include "data_file.h"

#include "posix_file.h"

#include <sys/mman.h>

namespace repack {

DataFile::DataFile(std::filesystem::path path) : m_path(std::move(path)) {}

DataFile::~DataFile()
{
    if (m_base)
        ::munmap(m_base, m_size);
}

Status DataFile::mapLocked()
{
    auto fd = UniqueFd::openRead(m_path);
    if (!fd)
        return fd.error();
    auto size = fd->size();
    if (!size)
        return size.error();
    m_size = *size;
    if (m_size > 0) {
        void* base = ::mmap(nullptr, m_size, PROT_READ, MAP_SHARED, fd->get(), 0);
        if (base == MAP_FAILED)
            return Error{systemMessage("cannot map", m_path)};
        m_base = base;
    }
    m_mapped = true;
    ++m_mapCount;
    return {};
}

Result<std::span<const std::byte>> DataFile::view(uint64_t offset, uint64_t length)
{
    std::lock_guard lock(m_mutex);
    if (m_invalidated)
        return Error{m_path.string() + ": invalidated: " + m_invalidReason};
    if (!m_mapped) {
        if (Status s = mapLocked(); !s)
            return s.error();
    }
    if (offset > m_size || length > m_size - offset)
        return Error{m_path.string() + ": range " + std::to_string(offset) + "+" +
                     std::to_string(length) + " lies past the end of the file (" +
                     std::to_string(m_size) + " bytes)"};
    const auto* base = static_cast<const std::byte*>(m_base);
    return std::span<const std::byte>(base ? base + offset : nullptr, length);
}

void DataFile::invalidate(std::string reason)
{
    std::lock_guard lock(m_mutex);
    m_invalidReason = std::move(reason);
    m_invalidated = true;
}

} // namespace repack
