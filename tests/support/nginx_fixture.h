// Debian's nginx (nginx-light) serving a temporary folder on 127.0.0.1 at a free port, for the
// remote-source suites (docs/remote-sources-design.md 1.4): one process (`master_process off`,
// `daemon off`), every path it writes in its own temporary folder, its log on stderr.
#pragma once

#include <QProcess>
#include <QString>

#include <QTemporaryDir>
#include <string>
#include <vector>

#include <filesystem>

namespace fixtures {

class NginxFixture {
public:
    NginxFixture();
    ~NginxFixture();
    NginxFixture(const NginxFixture&) = delete;
    NginxFixture& operator=(const NginxFixture&) = delete;

    // nginx's path, "" when it is not installed (a suite QSKIPs, saying so).
    static QString executable();
    // Starts nginx and waits until it answers: "" then, else why it did not start.
    QString start();
    void stop();

    std::filesystem::path www() const; // the folder served, empty at first
    std::string url(const std::string& name) const; // http://127.0.0.1:PORT/name
    // The requests answered so far, from nginx's access log: "METHOD /path" each, in order.
    // nginx writes a request's line after its answer has gone, so a client can read the log
    // before the line of the answer it has just had: this first asks for a marker of its own
    // and waits for the marker's line. nginx's one process runs one event at a time, and the
    // event that sent an answer logs it before nginx reads the marker's request: every answer
    // the test has had is then in the log (the markers' lines are left out).
    std::vector<std::string> requests() const;

private:
    QTemporaryDir m_dir;
    QProcess m_process;
    quint16 m_port = 0;
    mutable int m_markers = 0;
};

} // namespace fixtures

// Skips the test function, saying why, when nginx is not installed (in a suite, which
// includes <QTest>).
#define SKIP_WITHOUT_NGINX()                                                                       \
    do {                                                                                           \
        if (fixtures::NginxFixture::executable().isEmpty())                                        \
            QSKIP("nginx is not installed (apt-get install nginx-light): nginx tests skipped");    \
    } while (false)
