// A static file server (a FaultServer) of the files of a folder, each answered with the ETag
// "v1", but one: it is replaced on the server once it was read. From the first HEAD of it that
// follows a GET of its bytes on, it is another version (one byte changed, the ETag "v2"). A save
// reads by GETs, each checked against the version opened, then asks again before its commit
// point: the file is replaced between the two, where no check of a read can see it. The files
// are at /PREFIX/PATH, so the server is an S3 endpoint too (the path-style address of the
// object PATH of the bucket PREFIX).
#pragma once

#include "tests/support/fault_server.h"

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace fixtures {

class ReplacingServer {
public:
    // The files under `dir` at /`prefix`/ + their path there; `replaced` is one of those paths.
    ReplacingServer(
        const std::filesystem::path& dir, const std::string& prefix, std::string replaced);

    std::string url(const std::string& path) const; // http://127.0.0.1:PORT/PREFIX/path
    std::string endpoint() const; // http://127.0.0.1:PORT
    // Whether the file was replaced (asked for after it was read).
    bool replaced() const { return m_replaced; }

private:
    void answer(int socket, const FaultRequest& request);

    const std::string m_prefix;
    const std::string m_target; // the replaced file's
    std::map<std::string, std::string> m_files; // by target
    std::string m_newer; // the replaced file's new bytes
    std::atomic<bool> m_read{false};
    std::atomic<bool> m_replaced{false};
    std::unique_ptr<FaultServer> m_server; // last: stopped before the rest goes
};

} // namespace fixtures
