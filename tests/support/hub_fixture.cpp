#include "hub_fixture.h"

#include "tests/support/model_builder.h"
#include "tests/support/tensor_builder.h"

#include <algorithm>
#include <fstream>
#include <tuple>

namespace fs = std::filesystem;

namespace fixtures {
namespace {

std::string header(const std::string& name, const std::string& value)
{
    return name + ": " + value;
}

} // namespace

std::map<std::string, std::string> hubRepositoryFiles()
{
    onnx::ModelProto model = emptyModel();
    onnx::GraphProto& graph = *model.mutable_graph();
    *graph.add_initializer()
        = rawTensor("dense", onnx::TensorProto::FLOAT, {128, 512}, patternBytes(1 << 18, 3));
    *graph.add_initializer() = rawTensor("small", onnx::TensorProto::FLOAT, {8});
    const std::string data = addExternalPair(graph, "w.bin", 50000, 1000, 5);
    return {{"m/model.onnx", model.SerializeAsString()}, {"m/w.bin", data}};
}

std::map<std::string, std::string> optimumFiles()
{
    std::map<std::string, std::string> files{{"README.md", "# a model\n"}};
    uint8_t seed = 1;
    for (const auto& [name, a, b] :
        {std::tuple{"encoder_model", 3000, 700}, std::tuple{"decoder_model", 5000, 900},
            std::tuple{"decoder_with_past_model", 6000, 1100}}) {
        onnx::ModelProto model = emptyModel();
        onnx::GraphProto& graph = *model.mutable_graph();
        *graph.add_initializer() = rawTensor("small", onnx::TensorProto::FLOAT, {8});
        const std::string data = std::string(name) + ".onnx_data";
        files["onnx/" + data] = addExternalPair(graph, data, a, b, seed);
        files["onnx/" + std::string(name) + ".onnx"] = model.SerializeAsString();
        seed += 2;
    }
    return files;
}

void addSharedDecoders(std::map<std::string, std::string>& files)
{
    for (const std::string name : {"decoder_model", "decoder_with_past_model"}) {
        onnx::ModelProto model = emptyModel();
        const std::string data = name + ".onnx_data";
        files["onnx/" + data] = addExternalPair(*model.mutable_graph(), data, 5000, 900, 7);
        files["onnx/" + name + ".onnx"] = model.SerializeAsString();
    }
}

std::set<std::string> dataFilesOf(const std::map<std::string, std::string>& files)
{
    std::set<std::string> data;
    for (const auto& [path, bytes] : files)
        if (path.ends_with(".onnx_data"))
            data.insert(path);
    return data;
}

fs::path writeLocally(const std::map<std::string, std::string>& files, const fs::path& dir)
{
    for (const auto& [path, bytes] : files) {
        fs::create_directories((dir / path).parent_path());
        std::ofstream(dir / path, std::ios::binary) << bytes;
    }
    return dir / "m" / "model.onnx";
}

repack::HubSettings HubFixture::settings(const fs::path& cache, bool withToken) const
{
    repack::HubSettings hub;
    hub.endpoint = endpoint();
    hub.cache = cache;
    if (withToken)
        hub.token = kHubToken;
    return hub;
}

bool HubFixture::atCdn(const FaultRequest& r)
{
    return r.header("host").starts_with("localhost:");
}

void HubFixture::serve(
    int socket, const FaultRequest& r, const std::string& content, std::vector<std::string> headers)
{
    headers.push_back(header("Accept-Ranges", "bytes"));
    if (r.method == "HEAD" || !r.range) {
        headers.push_back(header("Content-Length", std::to_string(content.size())));
        FaultServer::respond(socket, "200 OK", headers, r.method == "HEAD" ? "" : content);
        return;
    }
    const auto [first, last] = *r.range;
    const uint64_t end = std::min<uint64_t>(last, content.size() - 1);
    headers.push_back(header("Content-Range",
        "bytes " + std::to_string(first) + "-" + std::to_string(end) + "/"
            + std::to_string(content.size())));
    FaultServer::respond(
        socket, "206 Partial Content", headers, content.substr(first, end - first + 1));
}

void HubFixture::list(int socket, const FaultRequest& r, const std::string& folder)
{
    std::vector<std::string> entries;
    std::set<std::string> folders;
    for (const auto& [path, bytes] : files) {
        if (!path.starts_with(folder + "/") || goneAt(r, path))
            continue;
        for (size_t slash = path.find('/', folder.size() + 1); slash != std::string::npos;
             slash = path.find('/', slash + 1))
            if (folders.insert(path.substr(0, slash)).second)
                entries.push_back(R"({"type":"directory","path":")" + path.substr(0, slash)
                    + R"(","size":0,"oid":"dir"})");
        const std::string size = std::to_string(bytes.size());
        entries.push_back(R"({"type":"file","path":")" + path + R"(","size":)" + size
            + R"(,"oid":")"
            + (branchMoved && r.target.find("/tree/main/") != std::string::npos ? "older"
                                                                                : gitOid(path))
            + "\""
            + (lfs.count(path) ? R"(,"lfs":{"oid":")" + lfsOid(path) + R"(","size":)" + size + "}"
                               : std::string())
            + "}");
    }
    const size_t cursor = r.target.find("&cursor=");
    const size_t first = cursor == std::string::npos ? 0 : std::stoul(r.target.substr(cursor + 8));
    std::vector<std::string> headers{header("Content-Type", "application/json")};
    if (first + pageSize < entries.size()) {
        const std::string next = !listingNext.empty() ? listingNext
                                                      : endpoint() + r.target.substr(0, cursor)
                + "&cursor=" + std::to_string(first + pageSize);
        headers.push_back(header("Link", "<" + next + ">; rel=\"next\""));
    }
    std::string body = "[";
    for (size_t i = first; i < entries.size() && i < first + pageSize; ++i)
        body += (i == first ? "" : ",") + entries[i];
    FaultServer::respond(socket, "200 OK", headers, body + "]");
}

std::string HubFixture::gitOid(const std::string& path) const
{
    return "git-" + std::to_string(files.at(path).size());
}

void HubFixture::answer(int socket, const FaultRequest& r)
{
    const std::string target = r.target.substr(0, r.target.find('?'));
    if (answerPushed(socket, r))
        return;
    if (atCdn(r) && busyCdn) {
        ++cdnBusyAnswers;
        FaultServer::respond(socket, "503 Service Unavailable", {header("Retry-After", "30")}, "");
        return;
    }
    if (atCdn(r) && stallCdn) {
        ++cdnStalls;
        server.stall(socket);
        return;
    }
    if (atCdn(r) || target.starts_with("/cdn/")) { // /cdn/PATH?Signature=sN
        const auto file = files.find(target.substr(5));
        if (!target.starts_with("/cdn/") || file == files.end()) {
            FaultServer::respond(socket, "404 Not Found", {}, "");
            return;
        }
        const size_t signed_ = r.target.find("?Signature=");
        const std::string signature
            = signed_ == std::string::npos ? std::string() : r.target.substr(signed_ + 11);
        const bool resigned = signature != firstSignature[file->first];
        if ((signatureUses > 0 && ++signatureAnswers[signature] > signatureUses)
            || (resignedRefused && resigned)) {
            FaultServer::respond(socket, "403 Forbidden",
                {header("Content-Type", "application/xml")},
                "<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>");
            return;
        }
        const bool newer = (file->first == changesAfterFirstRead && cdnAnswers[file->first]++ > 0)
            || (resignedIsNewVersion && resigned);
        serve(socket, r, file->second,
            {header("ETag", "\"cdn-" + file->first + (newer ? "-v2" : "") + "\"")});
        return;
    }
    for (const std::string& revision : {std::string("main"), kHubCommit}) {
        const std::string tree = "/api/models/org/repo/tree/" + revision + "/";
        if (target.starts_with(tree)) {
            list(socket, r, target.substr(tree.size()));
            return;
        }
    }
    const std::string old = "/org/old/resolve/";
    if (target.starts_with(old)) {
        FaultServer::respond(socket, "307 Temporary Redirect",
            {header("Location", "/org/repo/resolve/" + target.substr(old.size()))}, "");
        return;
    }
    const std::string prefix = "/org/repo/resolve/";
    if (!target.starts_with(prefix)) {
        FaultServer::respond(socket, "404 Not Found",
            {header("X-Error-Code", "RepoNotFound"),
                header("X-Error-Message", "Repository not found")},
            "");
        return;
    }
    if (gated) {
        FaultServer::respond(socket, "401 Unauthorized",
            {header("X-Error-Code", "GatedRepo"), header("X-Error-Message", "gated")}, "");
        return;
    }
    const std::string rest = target.substr(prefix.size());
    const std::string revision = rest.substr(0, rest.find('/'));
    const std::string path = rest.substr(rest.find('/') + 1);
    if (revision != "main" && revision != kHubCommit) {
        FaultServer::respond(
            socket, "404 Not Found", {header("X-Error-Code", "RevisionNotFound")}, "");
        return;
    }
    const auto file = files.find(path);
    if (file == files.end()) {
        FaultServer::respond(socket, "404 Not Found",
            {header("X-Error-Code", "EntryNotFound"), header("X-Repo-Commit", kHubCommit)}, "");
        return;
    }
    const std::string etag = "\"" + gitOid(path) + "\"";
    if (lfs.count(path)) {
        ++resolves[path];
        const std::string signature = "s" + std::to_string(++signatures);
        const bool first = firstSignature.try_emplace(path, signature).second;
        FaultServer::respond(socket, "302 Found",
            {header("Location",
                 !lfsLocation.empty() ? lfsLocation
                                      : (first && firstSignedAtHub ? endpoint() : cdn()) + "/cdn/"
                         + path + "?Signature=" + signature),
                header("X-Repo-Commit", kHubCommit),
                header("X-Linked-Etag", "\"" + lfsOid(path) + "\""),
                header("X-Linked-Size", std::to_string(file->second.size())), header("ETag", etag)},
            "");
        return;
    }
    serve(socket, r, file->second, {header("X-Repo-Commit", kHubCommit), header("ETag", etag)});
}

bool HubFixture::goneAt(const FaultRequest& r, const std::string& path) const
{
    return pushed && removedByPush.count(path)
        && r.target.find("/" + kHubCommit + "/") == std::string::npos;
}

bool HubFixture::answerPushed(int socket, const FaultRequest& r)
{
    if (!pushed)
        return false;
    const std::string target = r.target.substr(0, r.target.find('?'));
    for (const std::string& revision : {std::string("main"), kPushedCommit}) {
        const std::string tree = "/api/models/org/repo/tree/" + revision + "/";
        if (target.starts_with(tree)) {
            list(socket, r, target.substr(tree.size()));
            return true;
        }
        const std::string resolve = "/org/repo/resolve/" + revision + "/";
        if (!target.starts_with(resolve))
            continue;
        const std::string path = target.substr(resolve.size());
        const auto file = files.find(path);
        const std::string commit = header("X-Repo-Commit", kPushedCommit);
        if (file == files.end() || goneAt(r, path)) {
            FaultServer::respond(
                socket, "404 Not Found", {header("X-Error-Code", "EntryNotFound"), commit}, "");
            return true;
        }
        const std::string etag = header("ETag", "\"" + gitOid(path) + "\"");
        if (lfs.count(path)) // unchanged by the push: the CDN's copy
            FaultServer::respond(socket, "302 Found",
                {header("Location", cdn() + "/cdn/" + path), commit,
                    header("X-Linked-Etag", "\"" + lfsOid(path) + "\""),
                    header("X-Linked-Size", std::to_string(file->second.size())), etag},
                "");
        else
            serve(socket, r, file->second, {commit, etag});
        return true;
    }
    return false;
}

std::map<std::string, std::string> filesUnder(const fs::path& dir)
{
    std::map<std::string, std::string> files;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file()) {
            std::ifstream in(it->path(), std::ios::binary);
            files[it->path().lexically_relative(dir).string()]
                = std::string(std::istreambuf_iterator<char>(in), {});
        }
    return files;
}

} // namespace fixtures
