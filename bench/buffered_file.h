// A file written front to back through one fixed buffer: large sequential writes, bounded
// memory, every failure a Status naming the file.
#pragma once

#include "weight_fill.h"

#include "core/posix_file.h"
#include "core/result.h"

#include <filesystem>
#include <span>
#include <vector>

namespace repack::bench {

class BufferedFile {
public:
    static constexpr size_t kBufferBytes = 8u << 20; // a multiple of 8, see WeightFill::fill

    static Result<BufferedFile> create(const std::filesystem::path& path);

    Status write(std::span<const std::byte> data);
    Status writeZeros(uint64_t count);
    // Streams `count` bytes of `fill` through the buffer.
    Status writeFill(WeightFill& fill, uint64_t count);
    // Pads with zeros up to the next multiple of `alignment` (0 or 1: nothing).
    Status alignTo(uint64_t alignment);

    uint64_t position() const { return m_position; }
    const std::filesystem::path& path() const { return m_path; }
    // Flushes and closes; the file is complete only when this succeeds.
    Status close();

private:
    BufferedFile(UniqueFd fd, std::filesystem::path path);
    Status flush();

    UniqueFd m_fd;
    std::filesystem::path m_path;
    std::vector<std::byte> m_buffer;
    size_t m_used = 0;
    uint64_t m_position = 0;
};

} // namespace repack::bench
