#include "fault_server.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace fixtures {

namespace {

// The request's head, read up to its blank line; "" when the client sent none.
std::string readHead(int socket, const std::atomic<bool>& stop)
{
    std::string head;
    char buffer[4096];
    while (!stop && head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
        pollfd ready{socket, POLLIN, 0};
        if (poll(&ready, 1, 100) <= 0)
            continue;
        const ssize_t got = recv(socket, buffer, sizeof buffer, 0);
        if (got <= 0)
            return {};
        head.append(buffer, static_cast<size_t>(got));
    }
    return head;
}

FaultRequest parse(const std::string& head)
{
    FaultRequest request;
    size_t lineEnd = head.find("\r\n");
    const std::string first = head.substr(0, lineEnd);
    const size_t space = first.find(' ');
    request.method = first.substr(0, space);
    request.target = first.substr(space + 1, first.rfind(' ') - space - 1);
    while (lineEnd != std::string::npos) {
        const size_t start = lineEnd + 2;
        lineEnd = head.find("\r\n", start);
        const std::string line = head.substr(start, lineEnd - start);
        const size_t colon = line.find(':');
        if (colon == std::string::npos)
            continue;
        std::string name = line.substr(0, colon);
        std::transform(name.begin(), name.end(), name.begin(),
            [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        const size_t valueStart = line.find_first_not_of(' ', colon + 1);
        request.headers[name] = valueStart == std::string::npos ? "" : line.substr(valueStart);
    }
    const std::string range = request.header("range");
    unsigned long long from = 0, to = 0;
    if (std::sscanf(range.c_str(), "bytes=%llu-%llu", &from, &to) == 2)
        request.range = std::make_pair(uint64_t(from), uint64_t(to));
    return request;
}

} // namespace

std::string FaultRequest::header(const std::string& name) const
{
    const auto found = headers.find(name);
    return found == headers.end() ? std::string() : found->second;
}

FaultServer::FaultServer(Handler handler, const std::string& host)
    : m_handler(std::move(handler))
    , m_host(host)
{
    m_listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    if (inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1)
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t size = sizeof address;
    if (m_listener < 0 || bind(m_listener, reinterpret_cast<sockaddr*>(&address), size) != 0
        || listen(m_listener, 16) != 0
        || getsockname(m_listener, reinterpret_cast<sockaddr*>(&address), &size) != 0)
        return; // port() stays 0: the suite's first request fails, naming the URL
    m_port = ntohs(address.sin_port);
    m_thread = std::thread([this] { serve(); });
}

FaultServer::~FaultServer()
{
    m_stop = true;
    if (m_thread.joinable())
        m_thread.join();
    if (m_listener >= 0)
        close(m_listener);
}

std::string FaultServer::url(const std::string& target) const
{
    return "http://" + m_host + ":" + std::to_string(m_port) + "/" + target;
}

std::vector<FaultRequest> FaultServer::requests() const
{
    std::lock_guard lock(m_mutex);
    return m_requests;
}

void FaultServer::serve()
{
    while (!m_stop) {
        pollfd ready{m_listener, POLLIN, 0};
        if (poll(&ready, 1, 100) <= 0)
            continue;
        const int connection = accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (connection < 0)
            continue;
        const std::string head = readHead(connection, m_stop);
        if (!head.empty()) {
            const FaultRequest request = parse(head);
            int index = 0;
            {
                std::lock_guard lock(m_mutex);
                index = static_cast<int>(m_requests.size());
                m_requests.push_back(request);
            }
            m_handler(connection, request, index);
        }
        close(connection);
    }
}

bool FaultServer::send(int socket, std::string_view bytes)
{
    while (!bytes.empty()) {
        const ssize_t sent = ::send(socket, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (sent <= 0)
            return false;
        bytes.remove_prefix(static_cast<size_t>(sent));
    }
    return true;
}

bool FaultServer::respond(int socket, const std::string& status,
    const std::vector<std::string>& headers, std::string_view body)
{
    std::string head = "HTTP/1.1 " + status + "\r\n";
    bool hasLength = false;
    for (const std::string& header : headers) {
        head += header + "\r\n";
        hasLength = hasLength || header.rfind("Content-Length:", 0) == 0;
    }
    if (!hasLength)
        head += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    head += "Connection: close\r\n\r\n";
    return send(socket, head) && send(socket, body);
}

bool FaultServer::answerAsFile(int socket, const FaultRequest& request, std::string_view bytes,
    const std::string& etag, size_t sendAtMost)
{
    const std::string size = std::to_string(bytes.size());
    if (request.method == "HEAD")
        return respond(socket, "200 OK",
            {"Content-Length: " + size, "ETag: " + etag, "Accept-Ranges: bytes"}, {});
    const auto [first, last]
        = request.range.value_or(std::make_pair(uint64_t(0), uint64_t(bytes.size() - 1)));
    return respond(socket, "206 Partial Content",
        {"Content-Range: bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" + size,
            "Content-Length: " + std::to_string(last - first + 1), "ETag: " + etag},
        bytes.substr(first, std::min<uint64_t>(last - first + 1, sendAtMost)));
}

void FaultServer::stall(int socket) const
{
    char byte = 0;
    while (!m_stop) {
        pollfd ready{socket, POLLIN | POLLRDHUP, 0};
        if (poll(&ready, 1, 50) > 0
            && ((ready.revents & (POLLRDHUP | POLLHUP | POLLERR))
                || recv(socket, &byte, 1, MSG_PEEK) <= 0))
            return;
    }
}

} // namespace fixtures
