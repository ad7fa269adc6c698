#include "http_source.h"
#include "http_response.h"

#include "core/io/source_spec.h"
#include "core/io/tensor_bytes.h"

namespace repack {

namespace {

// What tells this version of the file from the next: its strong ETag, else its date and size.
std::string versionOf(const RemoteFile& file)
{
    if (file.strongEtag())
        return "etag " + file.etag;
    return "modified " + file.lastModified + ", weak etag " + file.etag;
}

// An answer a signed address gives once it has expired: 403 (S3, CloudFront), 401, 400 (an
// "expired request" of some stores) or 410.
bool isExpiryAnswer(long status)
{
    return status == 400 || status == 401 || status == 403 || status == 410;
}

} // namespace

Result<std::shared_ptr<HttpSource>> HttpSource::open(const std::string& url, HttpOptions options,
    const CancelToken* cancel, BlockCache* cache, FileRole role, Relocator relocate)
{
    auto transport = std::make_unique<HttpTransport>(std::move(options));
    BlockCache& blocks = cache ? *cache : BlockCache::shared();
    if (role == FileRole::Data) {
        auto file = transport->stat(url, cancel);
        if (!file)
            return file.error();
        return std::make_shared<HttpSource>(
            Made{}, std::move(*file), std::move(transport), blocks, std::move(relocate));
    }
    auto first = transport->statReading(url, BlockCache::kBlockBytes, cancel);
    if (!first)
        return first.error();
    auto source = std::make_shared<HttpSource>(
        Made{}, std::move(first->file), std::move(transport), blocks, std::move(relocate));
    if (!first->bytes.empty())
        blocks.keep(source->m_key, source->m_file.size, 0, std::move(first->bytes));
    return source;
}

HttpSource::HttpSource(Made, RemoteFile file, std::unique_ptr<HttpTransport> transport,
    BlockCache& cache, Relocator relocate)
    : m_file(std::move(file))
    , m_identity{m_file.display(), versionOf(m_file), m_file.size}
    , m_cache(cache)
    , m_key(BlockCache::newSourceKey())
    , m_transport(std::move(transport))
    , m_current(m_file)
    , m_relocate(std::move(relocate))
{
}

HttpSource::~HttpSource()
{
    m_cache.forget(m_key);
}

RangeFetch HttpSource::fetcher(const CancelToken* cancel)
{
    return [this, cancel](uint64_t offset, std::span<std::byte> into) -> Status {
        std::lock_guard lock(m_mutex);
        Status read = m_transport->read(m_current, offset, into, cancel);
        if (read || !mayRelocate())
            return read;
        return readRelocated(offset, into, read.error(), cancel);
    };
}

bool HttpSource::mayRelocate() const
{
    return m_relocate && isExpiryAnswer(m_transport->refusedBy());
}

Status HttpSource::relocate(const Error& refused, const CancelToken* cancel) const
{
    // A relocation that fails for good is not tried again by every later read: they get the
    // refusal of the old address.
    const auto giveUp = [this](Error error) -> Status {
        if (!error.is(ErrorKind::Cancelled))
            m_relocate = nullptr;
        return error;
    };
    auto address = m_relocate(cancel);
    if (!address)
        return giveUp({address.error().message + "; asked after its address was refused ("
                + refused.message + ")",
            address.error().kind});
    auto moved = m_transport->stat(*address, cancel);
    if (!moved)
        return giveUp({moved.error().message + " (at the address the file was given again)",
            moved.error().kind});
    if (Status same = checkSameFile(*moved, m_file); !same)
        return giveUp(same.error());
    m_current.location = moved->location;
    return {};
}

Status HttpSource::readRelocated(
    uint64_t offset, std::span<std::byte> into, const Error& refused, const CancelToken* cancel)
{
    if (Status moved = relocate(refused, cancel); !moved)
        return moved;
    Status read = m_transport->read(m_current, offset, into, cancel);
    if (!read && isExpiryAnswer(m_transport->refusedBy()))
        m_relocate = nullptr; // refused at once at a new address: asking again would not help
    return read;
}

Status HttpSource::revalidate(const CancelToken* cancel) const
{
    std::lock_guard lock(m_mutex);
    Status now = m_transport->revalidate(m_current, cancel);
    if (now || !mayRelocate())
        return now;
    // The address expired since the last read: the stat at the one given again, checked
    // against the file opened, is the answer.
    return relocate(now.error(), cancel);
}

Error HttpSource::named(const Error& error) const
{
    if (error.is(ErrorKind::Corrupt) && error.message.find(displayName()) == std::string::npos)
        return error.prefixed(displayName() + ": ");
    return error;
}

Result<TensorBytes> HttpSource::read(uint64_t offset, uint64_t length, const CancelToken* cancel)
{
    auto bytes = m_cache.read(m_key, m_file.size, offset, length, fetcher(cancel), cancel);
    if (!bytes)
        return named(bytes.error());
    return bytes;
}

Status HttpSource::readInto(uint64_t offset, std::span<std::byte> into, const CancelToken* cancel)
{
    Status status = m_cache.readInto(m_key, m_file.size, offset, into, fetcher(cancel), cancel);
    if (!status)
        return named(status.error());
    return status;
}

Result<std::unique_ptr<Model>> openRemoteModel(const SourceSpec& spec, SpecOpener open,
    const CancelToken* cancel, const ProgressCallback& progress)
{
    auto source = open(spec, FileRole::Model, cancel);
    if (!source)
        return source.error();
    // The model keeps its sibling opener; the caller's token only lives through this call.
    auto opening = std::make_shared<std::atomic<const CancelToken*>>(cancel);
    auto opened = Model::openRemote(
        *source,
        [model = spec, open = std::move(open), opening](
            const std::string& location) -> Result<std::shared_ptr<ByteSource>> {
            auto sibling = siblingSource(model, location);
            if (!sibling)
                return sibling.error();
            return open(*sibling, FileRole::Data, opening->load());
        },
        cancel, progress);
    opening->store(nullptr);
    return opened;
}

Result<std::unique_ptr<Model>> openHttpModel(const std::string& url, BlockCache* cache,
    const CancelToken* cancel, const ProgressCallback& progress)
{
    auto spec = parseSource(url);
    if (!spec)
        return spec.error();
    if (spec->kind != SourceSpec::Kind::Http)
        return Error::usage(spec->display() + ": not an http(s):// address");
    if (spec->isFolder())
        return Error::usage(
            spec->display() + ": a folder on a web server cannot be listed; name the .onnx file");
    return openRemoteModel(
        *spec,
        [cache](const SourceSpec& file, FileRole role,
            const CancelToken* stop) -> Result<std::shared_ptr<ByteSource>> {
            auto opened = HttpSource::open(file.url, {}, stop, cache, role);
            if (!opened)
                return opened.error();
            return std::shared_ptr<ByteSource>(*opened);
        },
        cancel, progress);
}

} // namespace repack
