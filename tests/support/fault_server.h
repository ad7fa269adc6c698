// A tiny HTTP/1.1 server on 127.0.0.1 at a free port, on a thread of its own, whose answers a
// test writes byte by byte: for what nginx never does (ignore Range, send a wrong Content-Range or
// a short body, fail with 503 once, stall). One connection at a time, each closed after its
// answer.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace fixtures {

struct FaultRequest {
    std::string method;
    std::string target; // path and query
    std::map<std::string, std::string> headers; // names lowercase
    std::optional<std::pair<uint64_t, uint64_t>> range; // "bytes=FIRST-LAST", inclusive
    std::string header(const std::string& name) const;
};

class FaultServer {
public:
    // The connection's socket and its request; the answer is the handler's to write. `index`
    // counts the requests from 0.
    using Handler = std::function<void(int socket, const FaultRequest& request, int index)>;
    // `host`: the loopback address it listens on (127.0.0.2 is another host to a client).
    explicit FaultServer(Handler handler, const std::string& host = "127.0.0.1");
    ~FaultServer();
    FaultServer(const FaultServer&) = delete;
    FaultServer& operator=(const FaultServer&) = delete;

    uint16_t port() const { return m_port; }
    std::string url(const std::string& target) const; // http://HOST:PORT/target
    const std::string& host() const { return m_host; }
    std::vector<FaultRequest> requests() const;
    bool stopping() const { return m_stop; }
    // Ends every stall and takes no more connections (the destructor waits for the thread).
    void stop() { m_stop = true; }

    // Writes `bytes`; false once the client has gone.
    static bool send(int socket, std::string_view bytes);
    // "HTTP/1.1 STATUS" + `headers` (each "Name: value") + Content-Length of `body` unless
    // `headers` has one + "Connection: close", then `body`.
    static bool respond(int socket, const std::string& status,
        const std::vector<std::string>& headers, std::string_view body);
    // Answers as a static file server does: HEAD with the size of `bytes` and `etag`, a range
    // GET with a 206 whose head promises the range asked and whose body stops after `sendAtMost`
    // bytes (a connection reset mid-body).
    static bool answerAsFile(int socket, const FaultRequest& request, std::string_view bytes,
        const std::string& etag, size_t sendAtMost = std::string::npos);
    // Holds the connection open and silent until the client closes it or the server stops.
    void stall(int socket) const;

private:
    void serve();

    Handler m_handler;
    std::string m_host;
    int m_listener = -1;
    uint16_t m_port = 0;
    std::atomic<bool> m_stop{false};
    mutable std::mutex m_mutex;
    std::vector<FaultRequest> m_requests;
    std::thread m_thread;
};

} // namespace fixtures
