// Where a model's bytes come from: a local file today (LocalSource, local_source.h), a web
// server, the Hugging Face Hub or S3 later (docs/remote-sources-design.md). A source stands for
// one version of its bytes, fixed when it is opened: a read that finds other bytes there fails
// with ErrorKind::Changed, never serves them as if they were the ones opened.
#pragma once

#include "core/file_identity.h"
#include "core/progress.h"
#include "core/result.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>

namespace repack {

class TensorBytes; // tensor_bytes.h: what read() hands out

// "Is this still the bytes I opened?": where they live and which version of them was opened.
struct SourceIdentity {
    std::string origin; // a local file's absolute path
    // A local file's FileIdentity; a remote source's validators as they are shown ("etag X",
    // or its date and weak ETag; a Hub file's linked ETag, its commit being in its name).
    std::variant<FileIdentity, std::string> version;
    uint64_t size = 0;
    bool operator==(const SourceIdentity&) const = default;
};

// Safe to use from several threads at once; its identity never changes after it is made.
class ByteSource {
public:
    virtual ~ByteSource() = default;

    virtual const SourceIdentity& identity() const = 0;
    // What messages call it (a path, later a URL without its query): never a secret.
    virtual std::string displayName() const = 0;
    virtual bool isLocal() const { return false; }

    // The bytes [offset, offset + length). Fails when the source cannot be read, the range lies
    // past its end, or it is not the version opened anymore (ErrorKind::Changed). Bytes mapped
    // from a file fault (SIGBUS) if the file shrinks underneath: touch them inside readMapped.
    virtual Result<TensorBytes> read(
        uint64_t offset, uint64_t length, const CancelToken* cancel = nullptr)
        = 0;
    // The bytes [offset, offset + into.size()) copied into `into`, all of them or an error as
    // read() fails. The default copies what read() gives (inside readMapped); a remote source
    // asks the server for a large range straight into `into`, with no buffer of its own.
    virtual Status readInto(
        uint64_t offset, std::span<std::byte> into, const CancelToken* cancel = nullptr);
    // Whether the bytes there are still the version opened, asked of where they live (the
    // server, for a remote source; the file's name, for a local one): ErrorKind::Changed, naming
    // the source, when they are not. A save asks it of every source it read, once every byte is
    // copied and before its commit point, so that no output mixes two versions of an input that
    // changed after its last read. `cancel` stops a request.
    virtual Status revalidate(const CancelToken* cancel = nullptr) const = 0;
    // Hints that bytes read from this source will not be needed again soon: the memory they
    // take may go back to the system (they are read again on the next touch). Only whole pages
    // inside [offset, offset + length), or inside `bytes` (what a read() of this source gave).
    virtual void releasePages(uint64_t offset, uint64_t length) const
    {
        (void)offset;
        (void)length;
    }
    virtual void releaseView(std::span<const std::byte> bytes) const { (void)bytes; }
};

} // namespace repack
