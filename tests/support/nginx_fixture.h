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
    std::vector<std::string> requests() const;

private:
    QTemporaryDir m_dir;
    QProcess m_process;
    quint16 m_port = 0;
};

} // namespace fixtures

// In a Qt Test function: skips it, saying why, when nginx is not installed.
#define SKIP_WITHOUT_NGINX()                                                                       \
    do {                                                                                           \
        if (fixtures::NginxFixture::executable().isEmpty())                                        \
            QSKIP("nginx is not installed (apt-get install nginx-light): nginx tests skipped");    \
    } while (false)
