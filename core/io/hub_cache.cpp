#include "hub_cache.h"

#include "core/paths.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace repack {

namespace fs = std::filesystem;

namespace {

// `~` at the start expanded with HOME, as huggingface_hub's expanduser does.
fs::path expandHome(const Environment& env, const std::string& path)
{
    if (path == "~" || path.starts_with("~/")) {
        if (auto home = setVariable(env, "HOME"))
            return fs::path(*home) / path.substr(std::min<size_t>(path.size(), 2));
    }
    return path;
}

// The first line of a small text file, trimmed; nothing when unreadable or empty.
std::optional<std::string> readSmallFile(const fs::path& path)
{
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line))
        return std::nullopt;
    line = trimmed(line);
    if (line.empty())
        return std::nullopt;
    return line;
}

bool truthy(const std::optional<std::string>& value)
{
    if (!value)
        return false;
    std::string v = *value;
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
    return v == "1" || v == "true" || v == "yes" || v == "on";
}

// models--ORG--REPO (datasets--, spaces--).
fs::path repoFolder(const fs::path& cache, const SourceSpec& spec)
{
    std::string name = spec.repoType + "s--" + spec.repo;
    for (size_t at = name.find('/'); at != std::string::npos; at = name.find('/', at))
        name.replace(at, 1, "--");
    return cache / name;
}

} // namespace

HubSettings hubSettings(const Environment& env)
{
    HubSettings s;
    s.endpoint = setVariable(env, "HF_ENDPOINT").value_or("https://huggingface.co");
    while (s.endpoint.ends_with('/'))
        s.endpoint.pop_back();
    fs::path home;
    if (auto hfHome = setVariable(env, "HF_HOME"))
        home = expandHome(env, *hfHome);
    else if (auto xdg = setVariable(env, "XDG_CACHE_HOME"))
        home = expandHome(env, *xdg) / "huggingface";
    else
        home = expandHome(env, "~/.cache/huggingface");
    if (auto cache = setVariable(env, "HF_HUB_CACHE"))
        s.cache = expandHome(env, *cache);
    else if (auto legacy = setVariable(env, "HUGGINGFACE_HUB_CACHE"))
        s.cache = expandHome(env, *legacy);
    else
        s.cache = home / "hub";
    if (auto token = setVariable(env, "HF_TOKEN"))
        s.token = trimmed(*token);
    else if (auto legacy = setVariable(env, "HUGGING_FACE_HUB_TOKEN"))
        s.token = trimmed(*legacy);
    else if (auto path = setVariable(env, "HF_TOKEN_PATH"))
        s.token = readSmallFile(expandHome(env, *path));
    else
        s.token = readSmallFile(home / "token");
    if (s.token && s.token->empty())
        s.token.reset();
    s.offline = truthy(env("HF_HUB_OFFLINE"));
    return s;
}

bool isCommit(std::string_view text)
{
    return text.size() == 40 && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    });
}

std::optional<std::string> cachedCommit(const fs::path& cache, const SourceSpec& spec)
{
    if (spec.kind != SourceSpec::Kind::Hub)
        return std::nullopt;
    if (isCommit(spec.revision))
        return spec.revision;
    // A revision such as "../x" is never a path out of refs/.
    for (const auto& part : fs::path(spec.revision))
        if (part == ".." || part == "." || part.empty() || part == "/")
            return std::nullopt;
    auto commit = readSmallFile(repoFolder(cache, spec) / "refs" / spec.revision);
    if (!commit || !isCommit(*commit))
        return std::nullopt;
    return commit;
}

std::optional<fs::path> cachedFile(
    const fs::path& cache, const SourceSpec& spec, const std::string& commit)
{
    if (spec.kind != SourceSpec::Kind::Hub || !isCommit(commit) || spec.isFolder())
        return std::nullopt;
    const fs::path folder = repoFolder(cache, spec);
    const fs::path file = folder / "snapshots" / commit / spec.file;
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
        return std::nullopt;
    // The snapshot's symlinks point into blobs/: one that leads out of the repository's
    // folder is not the cache's own and is not read.
    const fs::path real = fs::canonical(file, ec);
    if (ec || !isUnder(real, fs::canonical(folder, ec)) || ec)
        return std::nullopt;
    return file;
}

} // namespace repack
