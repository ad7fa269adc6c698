// Files of a Hugging Face Hub repository, read as huggingface_hub reads them (design
// docs/remote-sources-design.md 3.2): the revision named (a branch, a tag) is resolved ONCE to a
// commit, by the X-Repo-Commit of the first resolve answer, and every file of the model is then
// asked at ENDPOINT/ORG/REPO/resolve/COMMIT/PATH: a branch moved meanwhile never mixes two
// versions. A resolve answer is not followed blindly: a redirect within the Hub's origin (a
// renamed repository) is asked again as a resolve, one to another origin (the CDN) is where the
// bytes are. The token is the transport's to attach: it goes to the Hub's origin alone.
//
// The HF cache (hub_cache.h) is only read. A file the cache holds for the commit is read from
// disk and never asked of the Hub. The Hub is the truth when it is reachable: a branch is always
// resolved online (the cache's refs/BRANCH may be stale); only with HF_HUB_OFFLINE=1 is it taken
// from refs/BRANCH, and then every file must be in the cache. A commit named in full needs no
// resolve.
#pragma once

#include "http_source.h"
#include "http_transport.h"

#include "core/io/block_cache.h"
#include "core/io/byte_source.h"
#include "core/io/hub_api.h"
#include "core/io/hub_cache.h"
#include "core/io/source_spec.h"
#include "core/model/model.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace repack {

// What a folder's listing may take at most, all its pages together: a Hub that answers more is
// refused with an error, never read into memory without end.
inline constexpr uint64_t kHubListingBytes = 64 << 20;
inline constexpr int kHubListingPages = 1000;
inline constexpr size_t kHubListingEntries = 200000;

class HubClient {
public:
    // `cache`: the block cache of the remote files (the process's shared one when null).
    HubClient(HubSettings settings, BlockCache* cache = nullptr);

    // Fixes the commit of `spec`'s revision: asks the Hub once (HEAD of spec's file at the
    // revision, not followed), or takes it from the spec (a commit) or, offline, from the cache.
    Status pin(const SourceSpec& spec, const CancelToken* cancel = nullptr);
    const std::string& commit() const { return m_commit; }

    // The file `spec` names (its repository pinned), at the pinned commit: the cache's copy, else
    // the Hub's. It is named hf://ORG/REPO@COMMIT/PATH, never by a URL or a token.
    Result<std::shared_ptr<ByteSource>> open(const SourceSpec& spec,
        const CancelToken* cancel = nullptr, FileRole role = FileRole::Data);

    // The files under the folder `spec` names (hf://ORG/REPO[@REV]/DIR/), at the pinned commit
    // or else the spec's revision: one listing of the Hub's tree API, recursive, each further
    // page the one its Link header names. Folders are left out; no file is opened.
    Result<std::vector<HubTreeEntry>> list(
        const SourceSpec& spec, const CancelToken* cancel = nullptr);

    // `spec` at the pinned commit, as messages and reports name it.
    std::string nameOf(const SourceSpec& spec) const;

private:
    // The resolve answer for `url`, redirects within the Hub's origin followed.
    Result<HubFileMetadata> resolve(
        std::string url, const std::string& name, const CancelToken* cancel);

    HubSettings m_settings;
    BlockCache* m_cache;
    std::string m_commit;
    std::map<std::string, HubFileMetadata> m_resolved; // by path: the pin's answer, reused
    std::unique_ptr<HttpTransport> m_transport; // the Hub's resolve calls, with the token
};

// The transport options of every request to the Hub and its CDN: the token, when there is
// one, registered for the Hub endpoint's origin alone.
HttpOptions hubOptions(const HubSettings& settings);

// The model `spec` (a Hub file) names, with its data files beside it in the same commit: what
// `inspect hf://...` and `verify hf://...` open. Nothing is written, in the cache or elsewhere.
// `cancel` and `progress` as openRemoteModel's.
Result<std::unique_ptr<Model>> openHubModel(const SourceSpec& spec, const HubSettings& settings,
    BlockCache* cache = nullptr, const CancelToken* cancel = nullptr,
    const ProgressCallback& progress = {});

} // namespace repack
