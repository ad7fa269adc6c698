// A file on a web server as a ByteSource: opened by a HEAD that fixes its size and
// validator, read in blocks through the process's BlockCache (core/io/block_cache.h), each block
// fetched once by a checked range request (http_transport.h). A file changed on the server since
// it was opened fails every later read with ErrorKind::Changed; its blocks are never mixed with
// the new file's.
// A file at a signed address that expires (the Hub's CDN) has a Relocator: when the address is
// refused, the file's address is asked again, and the reads go on there once a stat of it finds
// the same size and validators.
#pragma once

#include "http_transport.h"

#include "core/io/block_cache.h"
#include "core/io/byte_source.h"
#include "core/io/source_spec.h"
#include "core/model/model.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

namespace repack {

// What a remote file is to the command: the model, whose structure is read from its start, or
// a data file beside it, only sized until its tensors are read.
enum class FileRole { Model, Data };

class HttpSource final : public ByteSource {
    struct Made {
        explicit Made() = default;
    };

public:
    // The file's address now, asked of whoever gave it (the Hub's resolve call): for an address
    // that was refused (its signature expired). An error says why there is none.
    using Relocator = std::function<Result<std::string>(const CancelToken* cancel)>;

    // `cache`: the process's shared one when null. A model file is opened by a GET of its first
    // block instead of a HEAD (HttpTransport::statReading), kept in the cache for the structure
    // walk that reads it from its start: one request fewer. `relocate`: where the file is when
    // its address is refused, none when the address never expires.
    static Result<std::shared_ptr<HttpSource>> open(const std::string& url,
        HttpOptions options = {}, const CancelToken* cancel = nullptr, BlockCache* cache = nullptr,
        FileRole role = FileRole::Data, Relocator relocate = {});
    HttpSource(Made, RemoteFile file, std::unique_ptr<HttpTransport> transport, BlockCache& cache,
        Relocator relocate);
    ~HttpSource() override;

    const SourceIdentity& identity() const override { return m_identity; }
    std::string displayName() const override { return m_file.display(); }
    Result<TensorBytes> read(
        uint64_t offset, uint64_t length, const CancelToken* cancel = nullptr) override;
    Status readInto(
        uint64_t offset, std::span<std::byte> into, const CancelToken* cancel = nullptr) override;
    // A conditional request at the address the reads go to; when that address has expired, the
    // file's address asked again and stated there, as a read refused there would be.
    Status revalidate(const CancelToken* cancel = nullptr) const override;

    const RemoteFile& file() const { return m_file; }

private:
    RangeFetch fetcher(const CancelToken* cancel);
    // Whether the last answer of the transport (m_mutex held) is one an expired address gives,
    // and the file has an address to ask for again.
    bool mayRelocate() const;
    // The file's address refused (m_mutex held): asked again, and stated there to serve the same
    // file (its size and validators), after which the reads go there. Relocating stops for good
    // when it fails (other than by cancel): that is no expiry.
    Status relocate(const Error& refused, const CancelToken* cancel) const;
    // A read refused at the file's address (m_mutex held): relocated, and the read tried there
    // once. Relocating stops for good when the new address is refused too.
    Status readRelocated(uint64_t offset, std::span<std::byte> into, const Error& refused,
        const CancelToken* cancel);
    // A read's error naming this file, when the cache's message does not.
    Error named(const Error& error) const;

    const RemoteFile m_file;
    const SourceIdentity m_identity;
    BlockCache& m_cache;
    const uint64_t m_key;
    mutable std::mutex m_mutex; // one request at a time on the transport's handle
    std::unique_ptr<HttpTransport> m_transport; // the one that opened the file: its connection
    // Guarded by m_mutex: where the reads go (m_file, at its last address) and how to find it;
    // a revalidation may move them too.
    mutable RemoteFile m_current;
    mutable Relocator m_relocate;
};

// Opens the file a spec names (a model, or a data file beside it) as a source; `cancel` (may be
// null) stops its requests.
using SpecOpener = std::function<Result<std::shared_ptr<ByteSource>>(
    const SourceSpec&, FileRole, const CancelToken* cancel)>;
// The model `spec` names, opened by `open`, and its data files: each location goes through
// siblingSource (so it never leaves the server root, repository or bucket), then `open`. The one
// way a remote model of any kind (http, hf://, s3://) finds its data files. `cancel` stops the
// opening (ErrorKind::Cancelled): the model's file, its structure and the data files opened
// meanwhile; a data file the model opens later (a reindex) is not asked by it. `progress` hears
// the bytes of the structure fetched (Model::openRemote).
Result<std::unique_ptr<Model>> openRemoteModel(const SourceSpec& spec, SpecOpener open,
    const CancelToken* cancel = nullptr, const ProgressCallback& progress = {});

// The model at `url` (http or https) with its data files beside it, every source read through
// `cache` (the process's shared one when null): what `inspect URL` and `verify URL` open.
Result<std::unique_ptr<Model>> openHttpModel(const std::string& url, BlockCache* cache = nullptr,
    const CancelToken* cancel = nullptr, const ProgressCallback& progress = {});

} // namespace repack
