#include "local_source.h"

#include "core/posix_file.h"

#include <system_error>

#include <sys/mman.h>
#include <unistd.h>

namespace repack {

namespace {

std::string absoluteOrigin(const std::filesystem::path& path)
{
    std::error_code error;
    std::filesystem::path absolute = std::filesystem::absolute(path, error);
    return (error ? path : absolute).lexically_normal().string();
}

} // namespace

std::shared_ptr<LocalSource> LocalSource::make(std::filesystem::path path, FileIdentity expected)
{
    return std::make_shared<LocalSource>(Made{}, std::move(path), expected);
}

LocalSource::LocalSource(Made, std::filesystem::path path, FileIdentity expected)
    : m_path(std::move(path))
    , m_identity{absoluteOrigin(m_path), expected, expected.size}
{
}

LocalSource::~LocalSource()
{
    if (m_base)
        ::munmap(m_base, m_size);
}

Status LocalSource::mapLocked()
{
    auto fd = UniqueFd::openRead(m_path);
    if (!fd)
        return fd.error();
    auto identity = identityOf(fd->get());
    if (!identity)
        return identity.error();
    if (!(*identity == fileIdentity()))
        return Error::changed(m_path.string()
            + ": invalidated: the file was replaced or changed since "
              "the model was opened");
    m_size = identity->size;
    if (m_size > 0) {
        void* base = ::mmap(nullptr, m_size, PROT_READ, MAP_SHARED, fd->get(), 0);
        if (base == MAP_FAILED)
            return Error::io(systemMessage("cannot map", m_path));
        // A file written moments ago sits in the page cache as large folios, which a fault maps
        // 2 MiB at a time: a walk that releases what it passed every 1 MiB then keeps twice that
        // resident at the index's peak. Pages of 4 KiB.
        ::madvise(base, m_size, MADV_NOHUGEPAGE);
        m_base = base;
    }
    m_mapped = true;
    ++m_mapCount;
    return {};
}

Result<TensorBytes> LocalSource::read(uint64_t offset, uint64_t length, const CancelToken*)
{
    auto bytes = view(offset, length);
    if (!bytes)
        return bytes.error();
    return TensorBytes::mapped(*bytes, shared_from_this());
}

Result<std::span<const std::byte>> LocalSource::view(uint64_t offset, uint64_t length)
{
    std::lock_guard lock(m_mutex);
    if (!m_mapped) {
        if (Status s = mapLocked(); !s)
            return s.error();
    } else if (Status s = checkStillCurrent(); !s) {
        return s.error();
    }
    if (offset > m_size || length > m_size - offset)
        return Error::corrupt(m_path.string() + ": range " + std::to_string(offset) + "+"
            + std::to_string(length) + " lies past the end of the file (" + std::to_string(m_size)
            + " bytes)");
    const auto* base = static_cast<const std::byte*>(m_base);
    return std::span<const std::byte>(base ? base + offset : nullptr, length);
}

// A mapping keeps the old file's bytes alive after the path is replaced (by a save of another
// Model, or another program), and shows new bytes at old offsets when the file is rewritten in
// place: one stat per read keeps either from being served as current.
Status LocalSource::checkStillCurrent() const
{
    const auto now = statusAt(m_path);
    if (!now || !(now->stamp.identity == fileIdentity()))
        return Error::changed(m_path.string()
            + ": invalidated: the file was replaced or changed since the model "
              "was opened");
    return {};
}

Status LocalSource::revalidate(const CancelToken*) const
{
    return checkStillCurrent();
}

void LocalSource::releasePages(uint64_t offset, uint64_t length) const
{
    std::lock_guard lock(m_mutex);
    releaseLocked(offset, length);
}

void LocalSource::releaseView(std::span<const std::byte> bytes) const
{
    std::lock_guard lock(m_mutex);
    const auto* base = static_cast<const std::byte*>(m_base);
    if (!m_base || bytes.data() < base || bytes.data() >= base + m_size)
        return; // not a view of the current mapping
    releaseLocked(static_cast<uint64_t>(bytes.data() - base), bytes.size());
}

void LocalSource::releaseLocked(uint64_t offset, uint64_t length) const
{
    if (!m_base || offset >= m_size)
        return;
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t end = std::min(m_size, offset + std::min(length, m_size - offset));
    const uint64_t first = (offset + page - 1) / page * page;
    const uint64_t last = end == m_size ? (end + page - 1) / page * page : end / page * page;
    if (last > first)
        ::madvise(static_cast<char*>(m_base) + first, last - first, MADV_DONTNEED);
}

int LocalSource::mapCount() const
{
    std::lock_guard lock(m_mutex);
    return m_mapCount;
}

} // namespace repack
