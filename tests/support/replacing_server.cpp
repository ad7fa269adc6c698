#include "replacing_server.h"

#include <fstream>
#include <iterator>

namespace fs = std::filesystem;

namespace fixtures {

ReplacingServer::ReplacingServer(
    const fs::path& dir, const std::string& prefix, std::string replaced)
    : m_prefix(prefix)
    , m_target("/" + prefix + "/" + replaced)
{
    for (const auto& entry : fs::recursive_directory_iterator(dir))
        if (entry.is_regular_file()) {
            std::ifstream in(entry.path(), std::ios::binary);
            m_files["/" + prefix + "/" + entry.path().lexically_relative(dir).generic_string()]
                = std::string(std::istreambuf_iterator<char>(in), {});
        }
    m_newer = m_files.at(m_target);
    m_newer[m_newer.size() / 2] ^= 1;
    m_server = std::make_unique<FaultServer>(
        [this](int socket, const FaultRequest& request, int) { answer(socket, request); });
}

std::string ReplacingServer::url(const std::string& path) const
{
    return m_server->url(m_prefix + "/" + path);
}

std::string ReplacingServer::endpoint() const
{
    return "http://127.0.0.1:" + std::to_string(m_server->port());
}

void ReplacingServer::answer(int socket, const FaultRequest& request)
{
    const std::string target = request.target.substr(0, request.target.find('?'));
    const auto file = m_files.find(target);
    if (file == m_files.end()) {
        FaultServer::respond(socket, "404 Not Found", {}, "no");
        return;
    }
    if (target == m_target) {
        if (request.method == "GET")
            m_read = true;
        else if (m_read)
            m_replaced = true;
    }
    const bool newer = target == m_target && m_replaced;
    FaultServer::answerAsFile(
        socket, request, newer ? m_newer : file->second, newer ? "\"v2\"" : "\"v1\"");
}

} // namespace fixtures
