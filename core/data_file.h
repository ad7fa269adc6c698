// An external data file, opened and memory-mapped once on first use and shared by all the
// tensors that live in it. A save that replaces the file invalidates it: reads then fail with
// an "invalidated" error instead of returning stale bytes.
#pragma once

#include "result.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>

namespace repack {

class DataFile {
public:
    explicit DataFile(std::filesystem::path path);
    ~DataFile();
    DataFile(const DataFile&) = delete;
    DataFile& operator=(const DataFile&) = delete;

    const std::filesystem::path& path() const { return m_path; }

    // The bytes [offset, offset + length), mapped on first use. Fails when the file is
    // unreadable, the range lies past its end, or the file has been invalidated.
    Result<std::span<const std::byte>> view(uint64_t offset, uint64_t length);

    // Marks every view of this file as stale; later views fail with `reason`.
    void invalidate(std::string reason);
    bool isInvalidated() const { return m_invalidated.load(); }

    // Number of times the file was mapped (1 at most); tests use it to prove sharing.
    int mapCount() const { return m_mapCount; }

private:
    Status mapLocked();

    std::filesystem::path m_path;
    std::mutex m_mutex;
    std::atomic<bool> m_invalidated{false};
    std::string m_invalidReason;
    void* m_base = nullptr;
    uint64_t m_size = 0;
    bool m_mapped = false;
    int m_mapCount = 0;
};

} // namespace repack
