// An external data file, opened and memory-mapped once on first use and shared by all the
// tensors that live in it. A save that replaces the file invalidates it: reads then fail with
// an "invalidated" error instead of returning stale bytes. The bytes come from its ByteSource
// (a LocalSource, core/io/local_source.h); the data file adds what the model knows of it.
#pragma once

#include "core/result.h"

#include "core/file_identity.h"
#include "core/io/byte_source.h"
#include "core/io/tensor_bytes.h"
#include <atomic>
#include <cstddef>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>

namespace repack {

struct SafetensorsHeader;

class DataFile {
public:
    // `expected` is what validation saw; the file is refused if it is not that file anymore.
    DataFile(std::filesystem::path path, FileIdentity expected);
    // A file read from `source`, not from disk (a web server, the Hub, S3): path() is
    // its display name, identity() holds its size only. view() refuses it: read() serves it.
    explicit DataFile(std::shared_ptr<ByteSource> source);
    ~DataFile();
    DataFile(const DataFile&) = delete;
    DataFile& operator=(const DataFile&) = delete;

    const std::filesystem::path& path() const { return m_path; }
    const FileIdentity& identity() const { return m_identity; }
    // Where the bytes come from; views stay valid while the data file (or the source) lives.
    const ByteSource& source() const { return *m_source; }

    // The bytes [offset, offset + length), mapped on first use. Fails when the file is
    // unreadable, the range lies past its end, or the file has been invalidated.
    Result<std::span<const std::byte>> view(uint64_t offset, uint64_t length) const;

    // The bytes [offset, offset + length) as a tensor's: a view of the mapping of a local file
    // (as view()), the source's own bytes for another. Fails as view() does.
    Result<TensorBytes> read(
        uint64_t offset, uint64_t length, const CancelToken* cancel = nullptr) const;
    // The same bytes copied into `into`: a remote file's large range is fetched straight there.
    Status readInto(
        uint64_t offset, std::span<std::byte> into, const CancelToken* cancel = nullptr) const;
    bool isLocal() const { return m_source->isLocal(); }

    // Drops the mapped pages from this process's memory (they stay in the page cache and are
    // read again on the next touch): after a walk over bytes that will not be needed soon.
    // Only whole pages inside [offset, offset + length) are dropped.
    void releasePages(uint64_t offset, uint64_t length);
    // releasePages() of the bytes `view` (a view() of this file) covers.
    void releaseView(std::span<const std::byte> view) const;

    // Marks every view of this file as stale; later views fail with `reason`.
    void invalidate(std::string reason);

    // The file's header when it is also a .safetensors file (core/model/safetensors.h): set once
    // while the model is validated, before the file is shared.
    void setSafetensors(std::shared_ptr<const SafetensorsHeader> header)
    {
        m_safetensors = std::move(header);
    }
    const SafetensorsHeader* safetensors() const { return m_safetensors.get(); }

    // Number of times the file was mapped (1 at most); tests use it to prove sharing.
    int mapCount() const;

private:
    // Changed once invalidate() ran: with m_mutex held, and taking it.
    Status validLocked() const;
    Status stillValid() const;

    std::filesystem::path m_path;
    FileIdentity m_identity;
    // A LocalSource: the memory of what it reads lives as long as it does, so a view() may
    // hand out a bare span.
    std::shared_ptr<ByteSource> m_source;
    mutable std::mutex m_mutex;
    std::atomic<bool> m_invalidated{false};
    std::string m_invalidReason;
    std::shared_ptr<const SafetensorsHeader> m_safetensors;
};

} // namespace repack
