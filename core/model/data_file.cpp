#include "data_file.h"

#include "tensor_info.h"

#include "core/io/local_source.h"

namespace repack {
DataFile::DataFile(std::filesystem::path path, FileIdentity expected)
    : m_path(std::move(path))
    , m_identity(expected)
    , m_source(LocalSource::make(m_path, expected))
{
}

DataFile::DataFile(std::shared_ptr<ByteSource> source)
    : m_path(source->displayName())
    , m_identity{.id = {}, .size = source->identity().size, .modifiedNs = 0, .bornNs = 0}
    , m_source(std::move(source))
{
}

DataFile::~DataFile() = default;

Result<std::span<const std::byte>> DataFile::view(uint64_t offset, uint64_t length) const
{
    // Held over the read: a view is served wholly before or wholly after an invalidate().
    std::lock_guard lock(m_mutex);
    if (Status valid = validLocked(); !valid)
        return valid.error();
    if (!m_source->isLocal()) // its bytes live as long as the TensorBytes read() gives
        return Error::internal(m_path.string() + ": a remote file is read with read(), not view()");
    // m_source is the LocalSource the constructor made: its view() skips the shared hold
    // read() takes, which this data file keeps itself.
    return static_cast<LocalSource&>(*m_source).view(offset, length);
}

Result<TensorBytes> DataFile::read(
    uint64_t offset, uint64_t length, const CancelToken* cancel) const
{
    if (m_source->isLocal()) {
        auto bytes = view(offset, length);
        if (!bytes)
            return bytes.error();
        return TensorBytes::view(*bytes, this);
    }
    if (Status valid = stillValid(); !valid)
        return valid.error();
    return m_source->read(offset, length, cancel);
}

Status DataFile::readInto(
    uint64_t offset, std::span<std::byte> into, const CancelToken* cancel) const
{
    if (m_source->isLocal()) { // a view of the mapping, as read() gives it
        auto bytes = read(offset, into.size(), cancel);
        if (!bytes)
            return bytes.error();
        return bytes->copyTo(into, m_path.string());
    }
    if (Status valid = stillValid(); !valid)
        return valid;
    return m_source->readInto(offset, into, cancel);
}

Status DataFile::validLocked() const
{
    if (m_invalidated)
        return Error::changed(m_path.string() + ": invalidated: " + m_invalidReason);
    return {};
}

Status DataFile::stillValid() const
{
    std::lock_guard lock(m_mutex);
    return validLocked();
}

void DataFile::releasePages(uint64_t offset, uint64_t length)
{
    m_source->releasePages(offset, length);
}

void DataFile::releaseView(std::span<const std::byte> view) const
{
    m_source->releaseView(view);
}

void DataFile::invalidate(std::string reason)
{
    std::lock_guard lock(m_mutex);
    m_invalidReason = std::move(reason);
    m_invalidated = true;
}

int DataFile::mapCount() const
{
    const auto* local = dynamic_cast<const LocalSource*>(m_source.get());
    return local ? local->mapCount() : 0;
}

// TensorBytes' members that know the model's words (core/io cannot include core/model).
TensorBytes TensorBytes::view(std::span<const std::byte> bytes, const DataFile* file)
{
    TensorBytes t;
    t.m_view = bytes;
    t.m_source = file ? &file->source() : nullptr;
    return t;
}

std::string TensorBytes::where(const TensorInfo& tensor) const
{
    return m_source ? tensor.qualifiedName() + " (in " + m_source->displayName() + ")"
                    : tensor.qualifiedName();
}

} // namespace repack
