#include "source_spec.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

namespace repack {

namespace {

constexpr std::string_view kForms = "a local path, http(s)://, hf://ORG/REPO[@REV]/PATH or "
                                    "s3://BUCKET/KEY";

std::string lower(std::string_view text)
{
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
        [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

int hexValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

std::vector<std::string_view> split(std::string_view text, char separator)
{
    std::vector<std::string_view> parts;
    size_t from = 0;
    while (true) {
        const size_t at = text.find(separator, from);
        parts.push_back(text.substr(from, at == std::string_view::npos ? at : at - from));
        if (at == std::string_view::npos)
            return parts;
        from = at + 1;
    }
}

// A path inside a repository, bucket or server (relative, '/'-separated, decoded): no ".."
// or "." segment, no empty one but a last (a folder's trailing '/'), no NUL or backslash.
Status checkInnerPath(std::string_view path, std::string_view what, std::string_view source)
{
    const std::vector<std::string_view> parts = split(path, '/');
    for (size_t i = 0; i < parts.size(); ++i) {
        const std::string_view part = parts[i];
        const bool last = i + 1 == parts.size();
        if (part == ".." || part == "." || (part.empty() && !last && !(i == 0 && path.empty())))
            return Error::usage(std::string(source) + ": the " + std::string(what)
                + " must be a plain path (no empty, '.' or '..' parts)");
        if (part.find('\0') != std::string_view::npos || part.find('\\') != std::string_view::npos)
            return Error::usage(
                std::string(source) + ": the " + std::string(what) + " holds a NUL or a backslash");
    }
    return {};
}

// "ORG/REPO": each part letters, digits, '.', '_' or '-', at most 96 characters in all,
// without "--" or ".." (the Hub's own rule; its cache folders join the parts with "--").
bool validRepoPart(std::string_view part)
{
    if (part.empty() || part.find("--") != std::string_view::npos
        || part.find("..") != std::string_view::npos)
        return false;
    return std::all_of(part.begin(), part.end(),
        [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '_' || c == '-'; });
}

// The Hub file `rest` names: "[datasets/|spaces/]ORG/REPO[@REV]/PATH" (hf://) or, from a
// Hub URL, "[datasets/|spaces/]ORG/REPO/{resolve,blob,tree}/REV/PATH" (`url`: PATH encoded).
Result<SourceSpec> hubSource(std::string_view rest, bool url, std::string_view text)
{
    const std::string source(text);
    SourceSpec spec;
    spec.kind = SourceSpec::Kind::Hub;
    spec.repoType = "model";
    for (std::string_view type : {"datasets/", "spaces/"}) {
        if (rest.starts_with(type)) {
            spec.repoType = std::string(type.substr(0, type.size() - 2));
            rest.remove_prefix(type.size());
        }
    }
    const size_t orgEnd = rest.find('/');
    if (orgEnd == std::string_view::npos)
        return Error::usage(source + ": a Hub repository is ORG/REPO (hf://ORG/REPO/PATH)");
    const std::string_view org = rest.substr(0, orgEnd);
    rest.remove_prefix(orgEnd + 1);
    const size_t repoEnd = rest.find('/');
    std::string_view repo = rest.substr(0, repoEnd);
    rest = repoEnd == std::string_view::npos ? std::string_view() : rest.substr(repoEnd + 1);
    std::string_view revision = "main";
    if (url) {
        if (!rest.empty()) {
            const size_t verbEnd = rest.find('/');
            const std::string_view verb = rest.substr(0, verbEnd);
            if (verb != "resolve" && verb != "blob" && verb != "tree")
                return Error::usage(source
                    + ": not a link to a Hub file (ORG/REPO/resolve/REV/PATH, blob/ or tree/)");
            rest
                = verbEnd == std::string_view::npos ? std::string_view() : rest.substr(verbEnd + 1);
            const size_t revisionEnd = rest.find('/');
            revision = rest.substr(0, revisionEnd);
            rest = revisionEnd == std::string_view::npos ? std::string_view()
                                                         : rest.substr(revisionEnd + 1);
            if (verb == "tree" && !rest.empty() && !rest.ends_with('/'))
                spec.file = "/"; // marks a folder below
        } else {
            spec.file = "/";
        }
    } else if (const size_t at = repo.find('@'); at != std::string_view::npos) {
        revision = repo.substr(at + 1);
        repo = repo.substr(0, at);
    }
    if (!validRepoPart(org) || !validRepoPart(repo) || org.size() + repo.size() + 1 > 96)
        return Error::usage(source + ": '" + std::string(org) + "/" + std::string(repo)
            + "' is not a Hub repository name (letters, digits, '.', '_', '-')");
    spec.repo = std::string(org) + "/" + std::string(repo);
    auto decodedRevision = percentDecode(revision);
    if (!decodedRevision)
        return decodedRevision.error().prefixed(source + ": the revision: ");
    if (decodedRevision->empty())
        return Error::usage(source + ": an empty revision after '@'");
    spec.revision = std::move(*decodedRevision);
    const bool folder = spec.file == "/";
    std::string file(rest);
    if (url) {
        auto decoded = percentDecode(rest);
        if (!decoded)
            return decoded.error().prefixed(source + ": ");
        file = std::move(*decoded);
    }
    if (folder && !file.empty() && !file.ends_with('/'))
        file += '/';
    spec.file = file;
    if (Status s = checkInnerPath(spec.file, "path in the repository", source); !s)
        return s.error();
    return spec;
}

Result<SourceSpec> httpSource(std::string_view text, size_t schemeEnd)
{
    const std::string source(text);
    const std::string_view afterScheme = text.substr(schemeEnd + 3);
    const size_t authorityEnd = afterScheme.find_first_of("/?#");
    const std::string_view authority = afterScheme.substr(0, authorityEnd);
    if (authority.find('@') != std::string_view::npos)
        return Error::usage("a URL with a user name or password: give credentials through the "
                            "environment (HF_TOKEN, AWS_ACCESS_KEY_ID), not in the URL");
    if (authority.empty() || authority.starts_with(':'))
        return Error::usage(source + ": a URL without a host");
    const std::string host = lower(authority.substr(0, authority.find(':')));
    std::string_view rest = authorityEnd == std::string_view::npos
        ? std::string_view()
        : afterScheme.substr(authorityEnd);
    rest = rest.substr(0, rest.find('#'));
    if ((host == "huggingface.co" || host == "hf.co") && rest.starts_with('/'))
        return hubSource(rest.substr(1, rest.find('?') - 1), true, text);
    SourceSpec spec;
    spec.kind = SourceSpec::Kind::Http;
    spec.url = lower(text.substr(0, schemeEnd)) + "://" + std::string(authority)
        + (rest.empty() || rest.front() == '?' ? "/" : "") + std::string(rest);
    auto path = percentDecode(rest.substr(0, rest.find('?')));
    if (!path)
        return path.error().prefixed(source + ": ");
    if (Status s = checkInnerPath(path->empty() ? "" : path->substr(1), "path", source); !s)
        return s.error();
    return spec;
}

Result<SourceSpec> s3Source(std::string_view rest, std::string_view text)
{
    const std::string source(text);
    const size_t bucketEnd = rest.find('/');
    SourceSpec spec;
    spec.kind = SourceSpec::Kind::S3;
    spec.bucket = std::string(rest.substr(0, bucketEnd));
    spec.file = bucketEnd == std::string_view::npos ? std::string()
                                                    : std::string(rest.substr(bucketEnd + 1));
    const bool bucketOk = spec.bucket.size() >= 3 && spec.bucket.size() <= 63
        && std::all_of(spec.bucket.begin(), spec.bucket.end(), [](unsigned char c) {
               return std::islower(c) || std::isdigit(c) || c == '.' || c == '-';
           });
    if (!bucketOk)
        return Error::usage(source + ": '" + spec.bucket
            + "' is not an S3 bucket name (3 to 63 lower-case letters, digits, '.', '-')");
    if (Status s = checkInnerPath(spec.file, "key", source); !s)
        return s.error();
    return spec;
}

// The '/'-separated `base` (a folder, or a file whose folder is meant) joined with the
// relative `location`, "." and ".." resolved; nothing when ".." climbs above the root.
std::optional<std::string> joinInside(std::string_view base, std::string_view location)
{
    std::vector<std::string_view> parts = split(base, '/');
    parts.pop_back(); // the file's own name (or the empty part after a folder's '/')
    for (std::string_view part : split(location, '/')) {
        if (part.empty() || part == ".")
            continue;
        if (part == "..") {
            if (parts.empty())
                return std::nullopt;
            parts.pop_back();
            continue;
        }
        parts.push_back(part);
    }
    std::string out;
    for (std::string_view part : parts) {
        if (part.empty())
            continue;
        if (!out.empty())
            out += '/';
        out += part;
    }
    return out;
}

} // namespace

bool SourceSpec::isFolder() const
{
    switch (kind) {
    case Kind::Local:
        return false;
    case Kind::Http: {
        const std::string_view path = std::string_view(url).substr(0, url.find('?'));
        return path.ends_with('/');
    }
    case Kind::Hub:
    case Kind::S3:
        return file.empty() || file.ends_with('/');
    }
    return false;
}

std::string SourceSpec::display() const
{
    switch (kind) {
    case Kind::Local:
        return path;
    case Kind::Http:
        return url.substr(0, url.find('?'));
    case Kind::Hub:
        return "hf://" + (repoType == "model" ? std::string() : repoType + "s/") + repo
            + (revision == "main" ? std::string() : "@" + percentEncode(revision, false)) + "/"
            + file;
    case Kind::S3:
        return "s3://" + bucket + "/" + file;
    }
    return {};
}

Result<SourceSpec> parseSource(std::string_view text)
{
    if (text.empty())
        return Error::usage("no model given (" + std::string(kForms) + ")");
    const size_t schemeEnd = text.find("://");
    const bool hasScheme = schemeEnd != std::string_view::npos && schemeEnd > 0
        && std::all_of(text.begin(), text.begin() + schemeEnd,
            [](unsigned char c) { return std::isalnum(c) || c == '+' || c == '-' || c == '.'; });
    if (!hasScheme) {
        SourceSpec spec;
        spec.path = std::string(text);
        return spec;
    }
    const std::string scheme = lower(text.substr(0, schemeEnd));
    const std::string_view rest = text.substr(schemeEnd + 3);
    if (scheme == "file") {
        std::string_view path = rest;
        if (path.starts_with("localhost/"))
            path.remove_prefix(9);
        if (!path.starts_with('/'))
            return Error::usage(std::string(text) + ": a file:// URL names an absolute path");
        auto decoded = percentDecode(path);
        if (!decoded)
            return decoded.error().prefixed(std::string(text) + ": ");
        SourceSpec spec;
        spec.path = std::move(*decoded);
        return spec;
    }
    if (scheme == "http" || scheme == "https")
        return httpSource(text, schemeEnd);
    if (scheme == "hf")
        return hubSource(rest, false, text);
    if (scheme == "s3")
        return s3Source(rest, text);
    return Error::usage(
        std::string(text) + ": unknown scheme '" + scheme + "' (" + std::string(kForms) + ")");
}

Result<SourceSpec> siblingSource(const SourceSpec& model, std::string_view location)
{
    const std::string where = model.display() + ": external data location '"
        + std::string(location.substr(0, location.find('\0'))) + "'";
    if (location.empty())
        return Error::corrupt(where + " is empty");
    if (location.find('\0') != std::string_view::npos
        || location.find('\\') != std::string_view::npos)
        return Error::corrupt(where + " holds a NUL or a backslash");
    if (location.starts_with('/') || location.find("://") != std::string_view::npos)
        return Error::corrupt(where + " is not relative to the model");
    SourceSpec sibling = model;
    switch (model.kind) {
    case SourceSpec::Kind::Local: {
        const size_t slash = model.path.rfind('/');
        sibling.path
            = (slash == std::string::npos ? std::string() : model.path.substr(0, slash + 1))
            + std::string(location);
        return sibling;
    }
    case SourceSpec::Kind::Http: {
        const size_t pathStart = model.url.find('/', model.url.find("://") + 3);
        const std::string path
            = model.url.substr(pathStart, model.url.find('?', pathStart) - pathStart);
        auto decoded = percentDecode(std::string_view(path).substr(1));
        if (!decoded)
            return decoded.error().prefixed(where + ": ");
        auto joined = joinInside(*decoded, location);
        if (!joined)
            return Error::corrupt(where + " leaves the server's root");
        sibling.url = model.url.substr(0, pathStart) + "/" + percentEncodePath(*joined);
        return sibling;
    }
    case SourceSpec::Kind::Hub:
    case SourceSpec::Kind::S3: {
        auto joined = joinInside(model.file, location);
        if (!joined)
            return Error::corrupt(where
                + (model.kind == SourceSpec::Kind::Hub ? " leaves the repository"
                                                       : " leaves the bucket"));
        sibling.file = std::move(*joined);
        return sibling;
    }
    }
    return Error::internal("siblingSource: unknown kind");
}

Result<std::string> percentDecode(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        const int h = i + 1 < text.size() ? hexValue(text[i + 1]) : -1;
        const int l = i + 2 < text.size() ? hexValue(text[i + 2]) : -1;
        if (h < 0 || l < 0)
            return Error::usage("'%' not followed by two hex digits");
        out += static_cast<char>(h * 16 + l);
        i += 2;
    }
    return out;
}

namespace {

bool isUnreserved(unsigned char c)
{
    return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

// `text` with every byte `keep` refuses written %XX.
template <typename Keep> std::string encodedBut(std::string_view text, Keep keep)
{
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (unsigned char c : text) {
        if (keep(c)) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}

} // namespace

std::string percentEncode(std::string_view text, bool slash)
{
    return encodedBut(
        text, [slash](unsigned char c) { return isUnreserved(c) || (slash && c == '/'); });
}

std::string percentEncodePath(std::string_view path)
{
    return encodedBut(path, [](unsigned char c) {
        return isUnreserved(c) || c == '/' || c == ':' || c == '@'
            || std::string_view("!$&'()*+,;=").find(static_cast<char>(c)) != std::string_view::npos;
    });
}

} // namespace repack
