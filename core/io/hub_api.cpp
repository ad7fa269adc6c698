#include "hub_api.h"

#include <nlohmann/json.hpp>

#include <charconv>

namespace repack {

namespace {

std::string repoPath(const SourceSpec& spec)
{
    return (spec.repoType == "model" ? std::string() : spec.repoType + "s/") + spec.repo;
}

std::string normalEtag(std::string etag)
{
    if (etag.starts_with("W/"))
        etag.erase(0, 2);
    if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"')
        etag = etag.substr(1, etag.size() - 2);
    return etag;
}

std::optional<uint64_t> parseSize(const std::optional<std::string>& text)
{
    if (!text || text->empty())
        return std::nullopt;
    uint64_t value = 0;
    const char* end = text->data() + text->size();
    const auto [ptr, ec] = std::from_chars(text->data(), end, value);
    if (ec != std::errc() || ptr != end)
        return std::nullopt;
    return value;
}

} // namespace

std::string hubFileUrl(const HubSettings& hub, const SourceSpec& spec, const std::string& revision)
{
    return hub.endpoint + "/" + repoPath(spec) + "/resolve/" + percentEncode(revision, false) + "/"
        + percentEncode(spec.file);
}

std::string hubTreeUrl(const HubSettings& hub, const SourceSpec& spec, const std::string& revision)
{
    std::string folder = spec.file;
    while (folder.ends_with('/'))
        folder.pop_back();
    return hub.endpoint + "/api/" + spec.repoType + "s/" + spec.repo + "/tree/"
        + percentEncode(revision, false) + (folder.empty() ? "" : "/" + percentEncode(folder))
        + "?recursive=true";
}

Result<HubFileMetadata> hubFileMetadata(
    int status, const HeaderLookup& header, const std::string& display, bool hadToken)
{
    const std::string code = header("X-Error-Code").value_or("");
    if (status == 401 || status == 403 || status == 404 || !code.empty()) {
        std::string why;
        if (code == "RepoNotFound" || (code.empty() && status == 401))
            why = "no such repository, or it is private";
        else if (code == "RevisionNotFound")
            why = "no such revision";
        else if (code == "EntryNotFound")
            why = "no such file at this revision";
        else if (code == "GatedRepo")
            why = "the repository is gated: accept its conditions on the Hub, with the account of "
                  "your token";
        else
            why = "the Hub answered " + std::to_string(status)
                + (code.empty() ? std::string() : " (" + code + ")");
        if (!hadToken && (status == 401 || code == "GatedRepo" || code == "RepoNotFound"))
            why += "; set HF_TOKEN if it is private or gated";
        return Error::notFound(display + ": " + why);
    }
    HubFileMetadata m;
    m.commit = header("X-Repo-Commit").value_or("");
    if (!isCommit(m.commit))
        return Error::io(display + ": the answer (" + std::to_string(status)
            + ") names no commit (X-Repo-Commit): is HF_ENDPOINT a Hub?");
    m.etag = normalEtag(header("X-Linked-Etag").value_or(header("ETag").value_or("")));
    const bool redirect = status >= 300 && status < 400;
    m.size = parseSize(header("X-Linked-Size"));
    if (!m.size && !redirect)
        m.size = parseSize(header("Content-Length"));
    if (redirect)
        m.location = header("Location").value_or("");
    if (m.etag.empty() || !m.size)
        return Error::io(display + ": the Hub's answer gives no content tag or size");
    return m;
}

Result<std::vector<HubTreeEntry>> parseHubTree(std::string_view json)
{
    const auto doc = nlohmann::json::parse(json, nullptr, false);
    if (doc.is_discarded() || !doc.is_array())
        return Error::corrupt("the Hub's folder listing is not a JSON array");
    std::vector<HubTreeEntry> entries;
    for (const auto& item : doc) {
        if (!item.is_object() || !item.contains("path") || !item["path"].is_string()
            || !item.contains("type") || !item["type"].is_string())
            return Error::corrupt("the Hub's folder listing has an entry without path or type");
        HubTreeEntry e;
        e.path = item["path"].get<std::string>();
        e.directory = item["type"].get<std::string>() == "directory";
        if (item.contains("size") && item["size"].is_number_unsigned())
            e.size = item["size"].get<uint64_t>();
        if (item.contains("oid") && item["oid"].is_string())
            e.oid = item["oid"].get<std::string>();
        if (item.contains("lfs") && item["lfs"].is_object() && item["lfs"].contains("oid")
            && item["lfs"]["oid"].is_string())
            e.lfsSha256 = item["lfs"]["oid"].get<std::string>();
        entries.push_back(std::move(e));
    }
    return entries;
}

std::optional<std::string> nextPageLink(std::string_view link)
{
    // <url>; rel="next", <url>; rel="prev"
    size_t pos = 0;
    while (pos < link.size()) {
        const size_t open = link.find('<', pos);
        if (open == std::string_view::npos)
            return std::nullopt;
        const size_t close = link.find('>', open);
        if (close == std::string_view::npos)
            return std::nullopt;
        const size_t end = link.find(',', close);
        const std::string_view params = link.substr(
            close + 1, end == std::string_view::npos ? std::string_view::npos : end - close - 1);
        if (params.find("rel=\"next\"") != std::string_view::npos
            || params.find("rel=next") != std::string_view::npos)
            return std::string(link.substr(open + 1, close - open - 1));
        if (end == std::string_view::npos)
            return std::nullopt;
        pos = end + 1;
    }
    return std::nullopt;
}

} // namespace repack
