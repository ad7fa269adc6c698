// A local file as a ByteSource: memory-mapped once, on the first read, and shared by every
// read. The file is refused from the first read on if it is not the file `expected` describes
// (another file renamed over the path, or this one rewritten or truncated in place).
#pragma once

#include "byte_source.h"
#include "tensor_bytes.h"

#include "core/file_identity.h"

#include <filesystem>
#include <memory>
#include <mutex>

namespace repack {

class LocalSource final : public ByteSource, public std::enable_shared_from_this<LocalSource> {
    struct Made {
        explicit Made() = default;
    };

public:
    // Nothing is opened yet: the file is opened, checked and mapped by the first read. Always
    // shared: what read() hands out keeps the source, and so its mapping, alive.
    static std::shared_ptr<LocalSource> make(std::filesystem::path path, FileIdentity expected);
    LocalSource(Made, std::filesystem::path path, FileIdentity expected);
    ~LocalSource() override;
    LocalSource(const LocalSource&) = delete;
    LocalSource& operator=(const LocalSource&) = delete;

    const std::filesystem::path& path() const { return m_path; }
    const FileIdentity& fileIdentity() const { return std::get<FileIdentity>(m_identity.version); }

    const SourceIdentity& identity() const override { return m_identity; }
    std::string displayName() const override { return m_path.string(); }
    bool isLocal() const override { return true; }
    // The bytes [offset, offset + length) of the mapping, valid while the source lives: read()
    // without the hold on the source (DataFile's views, which it keeps alive itself).
    Result<std::span<const std::byte>> view(uint64_t offset, uint64_t length);
    // A view of the mapping (TensorBytes::mapped), never a copy. Each read checks that the path
    // still names the file opened: a mapping keeps showing a replaced file's old bytes.
    Result<TensorBytes> read(
        uint64_t offset, uint64_t length, const CancelToken* cancel = nullptr) override;
    // Whether the path still names the file opened (its identity: not replaced, not rewritten).
    Status revalidate(const CancelToken* cancel = nullptr) const override;
    // madvise(MADV_DONTNEED) of the whole pages of the range: they stay in the page cache.
    void releasePages(uint64_t offset, uint64_t length) const override;
    void releaseView(std::span<const std::byte> bytes) const override;

    // Number of times the file was mapped (1 at most); tests use it to prove sharing.
    int mapCount() const;

private:
    Status mapLocked();
    Status checkStillCurrent() const;
    void releaseLocked(uint64_t offset, uint64_t length) const;

    std::filesystem::path m_path;
    SourceIdentity m_identity;
    mutable std::mutex m_mutex;
    void* m_base = nullptr;
    uint64_t m_size = 0;
    bool m_mapped = false;
    int m_mapCount = 0;
};

} // namespace repack
