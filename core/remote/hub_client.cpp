#include "hub_client.h"
#include "http_source.h"

#include "core/file_identity.h"
#include "core/io/local_source.h"
#include "core/io/tensor_bytes.h"

namespace repack {

namespace {

// A Hub file as a ByteSource: the bytes of `inner` (the cache's copy on disk, or the file at
// the Hub's or its CDN's URL) under the file's Hub name, so that reports and messages show
// hf://ORG/REPO@COMMIT/PATH, never a cache path or a signed URL. Never local: a model of it is
// never saved in place, and verify reads it through read().
class HubSource final : public ByteSource {
public:
    HubSource(std::shared_ptr<ByteSource> inner, std::string name, std::string version)
        : m_inner(std::move(inner))
        , m_identity{std::move(name), std::move(version), m_inner->identity().size}
    {
    }
    const SourceIdentity& identity() const override { return m_identity; }
    std::string displayName() const override { return m_identity.origin; }
    Result<TensorBytes> read(uint64_t offset, uint64_t length, const CancelToken* cancel) override
    {
        return m_inner->read(offset, length, cancel);
    }
    Status readInto(uint64_t offset, std::span<std::byte> into, const CancelToken* cancel) override
    {
        return m_inner->readInto(offset, into, cancel); // a large range straight from the server
    }
    // The bytes' own version, where they are read: the CDN's or the Hub's file (an address
    // that expired is asked of the Hub again, at the commit, with the linked ETag checked), or
    // the cache's copy.
    Status revalidate(const CancelToken* cancel) const override
    {
        return m_inner->revalidate(cancel);
    }
    void releasePages(uint64_t offset, uint64_t length) const override
    {
        m_inner->releasePages(offset, length);
    }
    void releaseView(std::span<const std::byte> bytes) const override
    {
        m_inner->releaseView(bytes);
    }

private:
    std::shared_ptr<ByteSource> m_inner;
    SourceIdentity m_identity;
};

} // namespace

HubClient::HubClient(HubSettings settings, BlockCache* cache)
    : m_settings(std::move(settings))
    , m_cache(cache)
    , m_transport(std::make_unique<HttpTransport>(hubOptions(m_settings)))
{
}

HttpOptions hubOptions(const HubSettings& settings)
{
    HttpOptions options;
    // The token belongs to the Hub's own origin: the transport sends it there and nowhere else
    // (a CDN, another host a Location names however it is spelled).
    if (settings.token)
        options.credential = Credential{
            urlOrigin(settings.endpoint), {"Authorization: Bearer " + *settings.token}, {}};
    return options;
}

std::string HubClient::nameOf(const SourceSpec& spec) const
{
    SourceSpec pinned = spec;
    if (!m_commit.empty())
        pinned.revision = m_commit;
    return pinned.display();
}

Result<HubFileMetadata> HubClient::resolve(
    std::string url, const std::string& name, const CancelToken* cancel)
{
    for (int hop = 0;; ++hop) {
        auto head = m_transport->head(url, cancel);
        if (!head)
            return head.error().is(ErrorKind::Cancelled) ? head.error()
                                                         : head.error().prefixed(name + ": ");
        // A relative Location (a renamed repository) is asked as a resolve again, as
        // huggingface_hub does; an absolute one is where the bytes are (its CDN). Both as
        // libcurl's parser reads them; whether a request carries the token is the transport's
        // decision alone, by the origin it connects to.
        if (!head->redirect.empty() && !isAbsoluteUrl(head->header("Location").value_or(""))) {
            if (hop >= HttpOptions{}.maxRedirects)
                return Error::io(name + ": the Hub redirects more than "
                    + std::to_string(HttpOptions{}.maxRedirects) + " times");
            url = head->redirect;
            continue;
        }
        auto metadata = hubFileMetadata(
            static_cast<int>(head->status),
            [&](std::string_view header) { return head->header(header); }, name,
            m_settings.token.has_value());
        if (metadata && !metadata->location.empty())
            metadata->location = head->redirect; // as libcurl resolves it, "" if it cannot
        return metadata;
    }
}

Status HubClient::pin(const SourceSpec& spec, const CancelToken* cancel)
{
    if (isCommit(spec.revision)) {
        m_commit = spec.revision;
        return {};
    }
    if (m_settings.offline) {
        auto cached = cachedCommit(m_settings.cache, spec);
        if (!cached)
            return Error::notFound(spec.display() + ": HF_HUB_OFFLINE is set and the Hub cache ("
                + m_settings.cache.string() + ") has no commit for revision '" + spec.revision
                + "'");
        m_commit = *cached;
        return {};
    }
    auto metadata = resolve(hubFileUrl(m_settings, spec, spec.revision), spec.display(), cancel);
    if (!metadata)
        return metadata.error();
    m_commit = metadata->commit;
    m_resolved[spec.file] = std::move(*metadata);
    return {};
}

Result<std::shared_ptr<ByteSource>> HubClient::open(
    const SourceSpec& spec, const CancelToken* cancel, FileRole role)
{
    if (m_commit.empty())
        return Error::internal(spec.display() + ": HubClient::open before pin");
    const std::string name = nameOf(spec);
    if (auto cached = cachedFile(m_settings.cache, spec, m_commit)) {
        const auto status = statusAt(*cached);
        if (!status)
            return Error::io(
                name + ": its copy in the Hub cache, " + cached->string() + ", cannot be read");
        // The blob's name is its content tag (the Hub's ETag).
        return std::shared_ptr<ByteSource>(
            std::make_shared<HubSource>(LocalSource::make(*cached, status->stamp.identity), name,
                "blob " + cached->filename().string()));
    }
    if (m_settings.offline)
        return Error::notFound(name + ": not in the Hub cache (" + m_settings.cache.string()
            + "), and HF_HUB_OFFLINE is set");
    const std::string url = hubFileUrl(m_settings, spec, m_commit);
    HubFileMetadata metadata;
    if (auto known = m_resolved.find(spec.file); known != m_resolved.end()) {
        metadata = known->second;
    } else {
        auto asked = resolve(url, name, cancel);
        if (!asked)
            return asked.error();
        metadata = std::move(*asked);
    }
    if (metadata.commit != m_commit)
        return Error::io(name + ": the Hub answered for commit " + metadata.commit);
    // Where the bytes are: the CDN a redirect named, else the file at the commit.
    const std::string target = metadata.location.empty() ? url : metadata.location;
    // A CDN address is signed for a while (an hour): a long read asks the Hub for it again, with
    // a client of its own (the source may be read on another thread, after this one is gone).
    HttpOptions options = hubOptions(m_settings);
    HttpSource::Relocator relocate;
    if (!metadata.location.empty())
        relocate = [settings = m_settings, url, name, metadata](
                       const CancelToken* stop) -> Result<std::string> {
            HubClient hub(settings);
            auto again = hub.resolve(url, name, stop);
            if (!again)
                return again.error();
            if (again->commit != metadata.commit)
                return Error::changed(
                    name + ": the Hub now answers for commit " + again->commit + "; open it again");
            if (again->etag != metadata.etag)
                return Error::changed(name
                    + ": the Hub now answers for another version of it (etag " + metadata.etag
                    + " -> " + again->etag + "); open it again");
            if (again->location.empty())
                return Error::io(name + ": the Hub no longer sends it from a CDN");
            return again->location;
        };
    options.name = name; // messages name the hf:// file first, not its CDN address
    auto source
        = HttpSource::open(target, std::move(options), cancel, m_cache, role, std::move(relocate));
    if (!source) // its messages name the file already (options.name)
        return source.error().is(ErrorKind::Cancelled) || source.error().message.starts_with(name)
            ? source.error()
            : source.error().prefixed(name + ": ");
    if ((*source)->file().size != metadata.size)
        return Error::changed(name + ": the Hub says " + std::to_string(*metadata.size)
            + " bytes, the file served has " + std::to_string((*source)->file().size));
    return std::shared_ptr<ByteSource>(
        std::make_shared<HubSource>(std::move(*source), name, "etag " + metadata.etag));
}

Result<std::vector<HubTreeEntry>> HubClient::list(const SourceSpec& spec, const CancelToken* cancel)
{
    const std::string name = nameOf(spec);
    if (m_settings.offline)
        return Error::usage(name + ": HF_HUB_OFFLINE is set, and a folder is listed by the Hub");
    const std::string hubOrigin = urlOrigin(m_settings.endpoint);
    std::vector<HubTreeEntry> files;
    uint64_t bytes = 0;
    size_t entries = 0;
    std::string url = hubTreeUrl(m_settings, spec, m_commit.empty() ? spec.revision : m_commit);
    for (int page = 1;; ++page) {
        auto response = m_transport->get(url, kHubListingBytes - bytes, cancel);
        if (!response)
            return response.error().is(ErrorKind::Cancelled)
                ? response.error()
                : response.error().prefixed(name + ": the folder's listing: ");
        const RawHead& head = response->head;
        if (head.status != 200) {
            // The Hub's refusal, worded as a file's (no such repository, revision; gated).
            auto refusal = hubFileMetadata(
                static_cast<int>(head.status),
                [&](std::string_view header) { return head.header(header); }, name,
                m_settings.token.has_value());
            return refusal ? Error::io(name + ": the Hub answered HTTP "
                       + std::to_string(head.status) + " to the folder's listing")
                           : refusal.error();
        }
        bytes += response->body.size();
        auto listed = parseHubTree(response->body);
        if (!listed)
            return listed.error().prefixed(name + ": ");
        entries += listed->size();
        if (entries > kHubListingEntries)
            return Error::io(name + ": the folder's listing has more than "
                + std::to_string(kHubListingEntries) + " entries");
        for (HubTreeEntry& entry : *listed)
            if (!entry.directory)
                files.push_back(std::move(entry));
        const auto link = nextPageLink(head.header("Link").value_or(""));
        if (!link)
            return files;
        // The next page as libcurl reads it; a page elsewhere than the Hub is not asked.
        auto next = resolveLocation(url, *link);
        if (!next || urlOrigin(*next) != hubOrigin)
            return Error::io(name + ": the listing's next page is not on the Hub");
        if (page >= kHubListingPages)
            return Error::io(name + ": the folder's listing has more than "
                + std::to_string(kHubListingPages) + " pages");
        url = std::move(*next);
    }
}

Result<std::unique_ptr<Model>> openHubModel(const SourceSpec& spec, const HubSettings& settings,
    BlockCache* cache, const CancelToken* cancel, const ProgressCallback& progress)
{
    if (spec.kind != SourceSpec::Kind::Hub)
        return Error::usage(spec.display() + ": not a Hub file (hf://ORG/REPO/PATH)");
    if (spec.isFolder())
        return Error::usage(spec.display() + ": a folder, not a model; name its .onnx file");
    auto client = std::make_shared<HubClient>(settings, cache);
    if (Status pinned = client->pin(spec, cancel); !pinned)
        return pinned.error();
    return openRemoteModel(
        spec,
        [client](const SourceSpec& file, FileRole role, const CancelToken* stop) {
            return client->open(file, stop, role);
        },
        cancel, progress);
}

} // namespace repack
