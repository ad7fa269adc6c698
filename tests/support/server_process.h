// A test server run as a child process (nginx_fixture.h, s3rver_fixture.h): how it is ended.
#pragma once

#include <QProcess>

namespace fixtures {

// Ends `server` with SIGTERM, then SIGKILL if it has not gone within 10 s; nothing when it is
// not running.
inline void stopServer(QProcess& server)
{
    if (server.state() == QProcess::NotRunning)
        return;
    server.terminate();
    if (!server.waitForFinished(10000)) {
        server.kill();
        server.waitForFinished(10000);
    }
}

} // namespace fixtures
