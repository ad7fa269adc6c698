// An ONNX file read from a source that is not a local file (a web server, the Hub,
// S3), without its weights: the bytes of its structure (every message, name, shape and
// external-data key) fetched into memory at their offsets, the raw_data payloads of inline
// tensors left out. The index, the scan and the sibling search then walk it as they walk a
// mapped file, with no second walker to keep in step with theirs.
//
// The bytes left out read as zeros: they are never a tensor's bytes. `covers` tells whether a
// range was fetched; a reader of inline payloads reads them from the source instead.
#pragma once

#include "core/io/byte_source.h"
#include "core/result.h"
#include "tensor_info.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace repack {

class TensorBytes;

class StructureImage {
public:
    // [offset, offset + length) of the file, all of it or an error (the source's own message).
    using Read = std::function<Result<TensorBytes>(uint64_t offset, uint64_t length)>;
    // Bytes are fetched in aligned blocks of this size (the remote cache's), each once.
    static constexpr uint64_t kBlockBytes = 256 << 10;

    // Walks the ModelProto of `size` bytes that `read` serves, fetching the blocks that hold
    // anything but raw_data payloads. A block wholly inside a payload is not fetched. The walk
    // goes into the messages that hold tensors and fetches the other fields' bytes only once
    // it has walked the whole structure, so it fetches no more than it can use:
    // - a file whose first bytes cannot begin a ModelProto (checkModelStart) is refused at its
    //   first block, and one whose top level shows no graph and no functions within its first
    //   4 MiB, or at all, is refused too: both kind Format;
    // - bytes that are not a well-formed model further in fail there (kind Corrupt, naming the
    //   byte, in the index's words), the rest of the file not fetched.
    // `name` labels errors.
    static Result<StructureImage> fetch(uint64_t size, const Read& read, const std::string& name);

    StructureImage(StructureImage&& other) noexcept;
    StructureImage& operator=(StructureImage&& other) noexcept;
    StructureImage(const StructureImage&) = delete;
    StructureImage& operator=(const StructureImage&) = delete;
    ~StructureImage();

    // The file's size; its bytes as fetched (zeros where not).
    std::span<const std::byte> bytes() const { return {m_data, m_size}; }
    // Whether every byte of `range` is the file's.
    bool covers(FileRange range) const;
    uint64_t fetchedBytes() const;

private:
    StructureImage() = default;

    std::byte* m_data = nullptr;
    uint64_t m_size = 0;
    uint64_t m_mapped = 0;
    std::vector<bool> m_fetched; // by block
};

// The .onnx of a remote model as a ByteSource: the bytes `image` covers from there, any other
// range (an inline tensor's payload) from `remote` itself, so no read ever sees the zeros of a
// byte left out.
std::shared_ptr<ByteSource> structureBackedSource(
    std::shared_ptr<const StructureImage> image, std::shared_ptr<ByteSource> remote);

} // namespace repack
