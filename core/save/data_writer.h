// Streams the bytes of a save plan's data files into new files: external sources are copied
// file-to-file (copy_file_range, falling back to a bounded buffer), inline sources are written
// from the model. A remote model's files (a web server, the Hub, S3) are read through
// their ByteSource into the same buffer, each range once, straight from the transport. Memory use
// is one buffer, whatever the model's size; open source files are bounded too, whatever the number
// of data files. Every source file opened is checked to be the very file that was validated
// (device, inode, size, modification time), and a tensor's bytes are checked against its checksum
// key when it has one.
#pragma once

#include "core/model/data_file.h"
#include "core/model/model.h"
#include "core/plan/save_options.h"
#include "core/plan/save_plan.h"
#include "core/posix_file.h"
#include "core/result.h"

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

    // Copies the bytes of `tensor` as they lie in a file, its external data or its raw_data
    // payload left in the .onnx, into `targetFd` at `targetOffset`: a payload spliced into a
    // model being written (core/save/model_writer.h). External bytes are checked against their
    // checksum like data file copies; progress counts them once (`countProgress`).
    Status copyPayload(size_t tensor, int targetFd, uint64_t targetOffset,
        const std::filesystem::path& targetPath, bool countProgress);
    // copyPayload() of bytes this save already copied once: `length` bytes at `offset` of the
    // local `file` (the first model temporary), so a remote payload is fetched once however
    // many model files it goes into. Progress is not counted again.
    Status copyCopied(size_t tensor, const DataFile& file, uint64_t offset, uint64_t length,
        int targetFd, uint64_t targetOffset, const std::filesystem::path& targetPath);
    // The bytes copyPayload() copies for `tensor`, or nullopt when they are not in a file.
    std::optional<uint64_t> payloadLength(size_t tensor) const;
    // Starts a new target file (for the background writeback of copies into it).
    void startTarget();

    // The checksum key each written tensor gets, by tensor index: the SHA-1 of its bytes when
    // options.checksum is set or it had a matching key; the old key, kept as evidence, for
    // corrupt bytes carried forward under options.allowCorrupt. Never a hash of corrupt bytes.
    const std::map<size_t, std::string>& checksums() const { return m_checksums; }

private:
    // Where a tensor's bytes lie in a file: its external data, or its raw_data payload still in
    // the .onnx file (inline tensors the save did not materialize). A local file is read by
    // its path (checked to be the file validated), any other through the file's source.
    struct SourceRange {
        const DataFile* file = nullptr;
        uint64_t offset = 0;
    };
    Result<SourceRange> sourceOf(size_t tensor) const;
    Result<int> sourceFd(size_t tensor, const SourceRange& source);
    // Bytes [source.offset + at, + into.size()) of the tensor's file into `into`: pread of a
    // local file, the source's readInto (straight from the server for a large range) otherwise.
    Status readSource(
        size_t tensor, const SourceRange& source, uint64_t at, std::span<std::byte> into);
    Status checkDigest(size_t tensor, const std::string& actual);
    Status copyRange(size_t tensor, const SourceRange& source, uint64_t length, int targetFd,
        uint64_t targetOffset, const std::filesystem::path& targetPath, bool verify,
        bool countProgress);
    Status writeInline(size_t tensor, int targetFd, uint64_t targetOffset,
        const std::filesystem::path& targetPath);
    // Writes `bytes` (what m_model.read(tensor) gave) into `targetFd` at `targetOffset`.
    Status writeBytes(size_t tensor, const TensorBytes& bytes, int targetFd, uint64_t targetOffset,
        const std::filesystem::path& targetPath, bool countProgress);
    Status advance(size_t tensor, uint64_t bytes);
    void startWriteback(int targetFd, uint64_t end);

    const Model& m_model;
    const SavePlan& m_plan;
    const SaveOptions& m_options;
    struct Source {
        std::filesystem::path path;
        UniqueFd fd;
    };
    std::vector<Source> m_sources; // most recently used last, at most kMaxOpenSources
    std::map<size_t, std::string> m_checksums;
    std::optional<AlignedBuffer> m_buffer; // allocated on first buffered copy
    Progress m_progress;
    uint64_t m_writebackStart = 0; // of the file being written: bytes before it are on their way
    uint64_t m_writebackDone = 0; // bytes before it are on disk
};

} // namespace repack
