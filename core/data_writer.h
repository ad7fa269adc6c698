// Streams the bytes of a save plan's data files into new files: external sources are copied
// file-to-file (copy_file_range, falling back to a bounded buffer), inline sources are written
// from the model. Memory use is one buffer, whatever the model's size.
#pragma once

#include "posix_file.h"
#include "result.h"
#include "save_options.h"
#include "save_plan.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace repack {

class Model;

class DataWriter {
public:
    DataWriter(const Model& model, const SavePlan& plan, const SaveOptions& options);

    // Writes data file `file` of the plan into `target` (already created, empty) and syncs it.
    Status write(size_t file, int targetFd, const std::filesystem::path& targetPath);

    // Reads one external tensor's bytes into memory, for tensors that come back inline.
    Result<std::string> readExternal(size_t tensor);

    // SHA-1 of each written tensor, by tensor index, when options.checksum is set.
    const std::map<size_t, std::string>& checksums() const { return m_checksums; }

    uint64_t totalBytes() const { return m_progress.bytesTotal; }

private:
    Result<int> sourceFd(size_t tensor);
    Status copyExternal(size_t tensor, int targetFd, uint64_t targetOffset,
        const std::filesystem::path& targetPath);
    Status writeInline(size_t tensor, int targetFd, uint64_t targetOffset,
        const std::filesystem::path& targetPath);
    Status advance(size_t tensor, uint64_t bytes);
    void startWriteback(int targetFd, uint64_t end);

    const Model& m_model;
    const SavePlan& m_plan;
    const SaveOptions& m_options;
    std::map<std::filesystem::path, UniqueFd> m_sources;
    std::map<size_t, std::string> m_checksums;
    std::optional<AlignedBuffer> m_buffer; // allocated on first buffered copy
    Progress m_progress;
    uint64_t m_writebackStart = 0; // of the file being written: bytes before it are on their way
    uint64_t m_writebackDone = 0; // bytes before it are on disk
};

} // namespace repack
