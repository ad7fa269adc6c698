// The Hugging Face Hub's HTTP interface as huggingface_hub speaks it: the address of
// a file and of a folder listing, what a file's response headers say (its commit, content tag
// and size, or why it is refused), and the listing's pages. Text in, values out: the requests
// themselves are the transport's.
#pragma once

#include "core/result.h"
#include "hub_cache.h"
#include "source_spec.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace repack {

// ENDPOINT/[datasets/|spaces/]ORG/REPO/resolve/REV/PATH; `revision` (a commit, once known)
// replaces the spec's.
std::string hubFileUrl(const HubSettings& hub, const SourceSpec& spec, const std::string& revision);
// ENDPOINT/api/{models,datasets,spaces}/ORG/REPO/tree/REV/PATH?recursive=true: the files
// under the spec's folder, first page.
std::string hubTreeUrl(const HubSettings& hub, const SourceSpec& spec, const std::string& revision);

// A response header by name (any case), or nothing.
using HeaderLookup = std::function<std::optional<std::string>(std::string_view name)>;

// What the Hub says of a file, from the headers of its resolve response (not followed).
struct HubFileMetadata {
    std::string commit; // X-Repo-Commit: 40 hex digits
    std::string etag; // X-Linked-Etag, else ETag; W/ and quotes taken off
    std::optional<uint64_t> size; // X-Linked-Size, else Content-Length of a response not redirected
    std::string location; // Location of a redirect: where the bytes are
};
// `status` and the headers of HEAD ENDPOINT/.../resolve/...: the metadata, or NotFound naming
// `display` and saying why (X-Error-Code: a repository, revision or file not found, a gated
// repository; 401 without a token hints at HF_TOKEN). The token is never in a message.
Result<HubFileMetadata> hubFileMetadata(
    int status, const HeaderLookup& header, const std::string& display, bool hadToken);

struct HubTreeEntry {
    std::string path; // in the repository
    bool directory = false;
    uint64_t size = 0;
    std::string oid; // git blob id
    std::string lfsSha256; // for a file kept in LFS
};
// One page of a tree listing (a JSON array).
Result<std::vector<HubTreeEntry>> parseHubTree(std::string_view json);
// The URL of a Link header's rel="next", if any (the listing's next page).
std::optional<std::string> nextPageLink(std::string_view link);

} // namespace repack
