// A protobuf input stream over a file descriptor that reads into one page-aligned buffer.
// protobuf's FileInputStream reads into new[]-allocated memory 16 bytes off a page, which the
// kernel fills several times slower.
#pragma once

#include "posix_file.h"

#include <google/protobuf/io/zero_copy_stream.h>

#include <filesystem>
#include <string>

namespace repack {

class AlignedInputStream final : public google::protobuf::io::ZeroCopyInputStream {
public:
    AlignedInputStream(int fd, std::filesystem::path path, size_t bufferBytes = 4u << 20);

    bool Next(const void** data, int* size) override;
    void BackUp(int count) override;
    bool Skip(int count) override;
    int64_t ByteCount() const override { return m_position - static_cast<int64_t>(m_available); }

    // The read error that ended the stream, if any (empty when it ended at end of file).
    const std::string& error() const { return m_error; }

private:
    int m_fd;
    std::filesystem::path m_path;
    AlignedBuffer m_buffer;
    size_t m_filled = 0; // bytes of the buffer holding file data
    size_t m_available = 0; // of those, the last ones backed up (not yet consumed)
    int64_t m_position = 0; // file bytes read into the buffer so far
    std::string m_error;
};

} // namespace repack
