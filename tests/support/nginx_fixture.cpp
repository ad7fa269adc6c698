#include "nginx_fixture.h"
#include "server_process.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QThread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace fixtures {

namespace {

sockaddr_in loopback(quint16 port)
{
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    return address;
}

// A port of 127.0.0.1 nobody listens on now (the system's pick for port 0).
quint16 freePort()
{
    const int probe = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address = loopback(0);
    socklen_t size = sizeof address;
    quint16 port = 0;
    if (probe >= 0 && bind(probe, reinterpret_cast<sockaddr*>(&address), size) == 0
        && getsockname(probe, reinterpret_cast<sockaddr*>(&address), &size) == 0)
        port = ntohs(address.sin_port);
    if (probe >= 0)
        close(probe);
    return port;
}

QString config(const QString& dir, quint16 port)
{
    return QStringLiteral(
        "daemon off; master_process off; pid %1/nginx.pid; error_log stderr warn;\n"
        "events {}\n"
        "http {\n"
        "  access_log %1/access.log;\n"
        "  client_body_temp_path %1/t/body; proxy_temp_path %1/t/proxy;\n"
        "  fastcgi_temp_path %1/t/fcgi; uwsgi_temp_path %1/t/uwsgi;\n"
        "  scgi_temp_path %1/t/scgi;\n"
        "  server { listen 127.0.0.1:%2; root %1/www; }\n"
        "}\n")
        .arg(dir)
        .arg(port);
}

bool answers(quint16 port)
{
    const int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_in address = loopback(port);
    const bool connected = client >= 0
        && connect(client, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
    if (client >= 0)
        close(client);
    return connected;
}

// Asks 127.0.0.1:port for `path` (HTTP/1.0, the answer read to its end): false when it cannot.
bool ask(quint16 port, const std::string& path)
{
    const int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (client < 0)
        return false;
    const sockaddr_in address = loopback(port);
    bool asked = connect(client, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    asked = asked
        && send(client, request.data(), request.size(), MSG_NOSIGNAL)
            == static_cast<ssize_t>(request.size());
    char answer[4096];
    while (asked && recv(client, answer, sizeof answer, 0) > 0) { }
    close(client);
    return asked;
}

// "METHOD /path" of each request line in the access log at `file`, in order.
std::vector<std::string> loggedRequests(const std::string& file)
{
    std::vector<std::string> requests;
    std::ifstream log(file);
    for (std::string line; std::getline(log, line);) {
        // 127.0.0.1 - - [DATE] "GET /m/model.onnx HTTP/1.1" 206 ...
        const size_t open = line.find('"');
        const size_t protocol = line.find(" HTTP/", open);
        if (open != std::string::npos && protocol != std::string::npos)
            requests.push_back(line.substr(open + 1, protocol - open - 1));
    }
    return requests;
}

} // namespace

NginxFixture::NginxFixture()
{
    QDir(m_dir.path()).mkpath(QStringLiteral("www"));
    QDir(m_dir.path()).mkpath(QStringLiteral("t"));
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
}

NginxFixture::~NginxFixture()
{
    stop();
}

QString NginxFixture::executable()
{
    QString found = QStandardPaths::findExecutable(QStringLiteral("nginx"));
    if (found.isEmpty())
        found = QStandardPaths::findExecutable(
            QStringLiteral("nginx"), {QStringLiteral("/usr/sbin"), QStringLiteral("/sbin")});
    return found;
}

QString NginxFixture::start()
{
    const QString nginx = executable();
    if (nginx.isEmpty())
        return QStringLiteral("nginx is not installed (apt-get install nginx-light)");
    const QString dir = m_dir.path();
    QString why;
    // Another process may take the free port before nginx binds it: try a few.
    for (int attempt = 0; attempt < 5; ++attempt) {
        m_port = freePort();
        QFile file(dir + QStringLiteral("/nginx.conf"));
        if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
            return QStringLiteral("cannot write ") + file.fileName();
        file.write(config(dir, m_port).toUtf8());
        file.close();
        m_process.start(nginx,
            {QStringLiteral("-p"), dir, QStringLiteral("-c"), file.fileName(), QStringLiteral("-e"),
                QStringLiteral("stderr")});
        if (!m_process.waitForStarted(10000))
            return QStringLiteral("nginx did not start: ") + m_process.errorString();
        const QDeadlineTimer deadline(20000);
        while (!deadline.hasExpired() && m_process.state() == QProcess::Running) {
            if (answers(m_port))
                return {};
            QThread::msleep(50);
        }
        m_process.waitForFinished(1000);
        why = QString::fromUtf8(m_process.readAllStandardError());
        stop();
        if (!why.contains(QStringLiteral("Address already in use")))
            break;
    }
    return QStringLiteral("nginx did not answer on 127.0.0.1:%1: %2").arg(m_port).arg(why);
}

void NginxFixture::stop()
{
    stopServer(m_process);
}

std::filesystem::path NginxFixture::www() const
{
    return std::filesystem::path(m_dir.path().toStdString()) / "www";
}

std::string NginxFixture::url(const std::string& name) const
{
    return "http://127.0.0.1:" + std::to_string(m_port) + "/" + name;
}

std::vector<std::string> NginxFixture::requests() const
{
    const std::string file = m_dir.filePath(QStringLiteral("access.log")).toStdString();
    const std::string marker = "GET /.log-marker-" + std::to_string(++m_markers);
    std::vector<std::string> requests = loggedRequests(file); // a stopped server logged them all
    if (m_process.state() == QProcess::Running && ask(m_port, marker.substr(4))) {
        const QDeadlineTimer deadline(10000);
        while (std::ranges::find(requests, marker) == requests.end() && !deadline.hasExpired()) {
            QThread::msleep(5);
            requests = loggedRequests(file);
        }
    }
    std::erase_if(
        requests, [](const std::string& r) { return r.starts_with("GET /.log-marker-"); });
    return requests;
}

} // namespace fixtures
