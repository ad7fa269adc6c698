#include "s3rver_fixture.h"
#include "server_process.h"

#include <QDeadlineTimer>
#include <QFileInfo>
#include <QRegularExpression>
#include <QUrl>

namespace fixtures {

namespace {

QString modules()
{
    return qEnvironmentVariable("REPACK_S3RVER_MODULES");
}

QString node()
{
    return qEnvironmentVariable("REPACK_NODE");
}

// The server's command line, run by `node -e` (the package ships no executable of its own).
const char* const kLaunch = "require(process.env.REPACK_S3RVER_MODULES"
                            " + '/@20minutes/s3rver/lib/cli.js')"
                            ".parseAsync(process.argv.slice(1), {from: 'user'})";

// PUT of a file's bytes to a URL; exits 0 on a 200 answer.
const char* const kPut
    = "const [url, file] = process.argv.slice(1);"
      "const body = require('fs').readFileSync(file);"
      "const request = require('http').request(url, {method: 'PUT',"
      " headers: {'Content-Length': body.length}}, (response) => {"
      " response.resume(); response.on('end', () => {"
      " if (response.statusCode !== 200) console.error('HTTP ' + response.statusCode);"
      " process.exit(response.statusCode === 200 ? 0 : 1); }); });"
      "request.on('error', (e) => { console.error(e.message); process.exit(2); });"
      "request.end(body);";

} // namespace

S3rverFixture::S3rverFixture()
{
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
}

S3rverFixture::~S3rverFixture()
{
    stop();
}

QString S3rverFixture::unavailable()
{
    if (node().isEmpty() || node().endsWith(QStringLiteral("-NOTFOUND")))
        return QStringLiteral("node is not installed (apt-get install nodejs npm)");
    if (modules().isEmpty()
        || !QFileInfo::exists(modules() + QStringLiteral("/@20minutes/s3rver/package.json")))
        return QStringLiteral("the S3 server is not installed for the tests "
                              "(scripts/install-test-s3rver.sh installs it into build/s3rver)");
    return {};
}

QString S3rverFixture::start(const std::string& bucket)
{
    if (const QString why = unavailable(); !why.isEmpty())
        return why;
    m_bucket = bucket;
    m_process.start(node(),
        {QStringLiteral("-e"), QString::fromLatin1(kLaunch), QStringLiteral("--"),
            QStringLiteral("-d"), m_dir.path() + QStringLiteral("/data"), QStringLiteral("-a"),
            QStringLiteral("127.0.0.1"), QStringLiteral("-p"), QStringLiteral("0"),
            QStringLiteral("-s"), QStringLiteral("--configure-bucket"),
            QString::fromStdString(bucket)});
    if (!m_process.waitForStarted(10000))
        return QStringLiteral("node did not start: ") + m_process.errorString();
    const QRegularExpression listening(QStringLiteral("S3rver listening on [^:]+:(\\d+)"));
    QByteArray said;
    const QDeadlineTimer deadline(30000);
    while (!deadline.hasExpired() && m_process.state() == QProcess::Running) {
        m_process.waitForReadyRead(100);
        said += m_process.readAllStandardOutput();
        if (const auto match = listening.match(QString::fromUtf8(said)); match.hasMatch()) {
            m_port = match.captured(1).toUShort();
            return {};
        }
    }
    const QString why = QString::fromUtf8(said + m_process.readAllStandardError());
    stop();
    return QStringLiteral("the S3 server did not start: ") + why;
}

void S3rverFixture::stop()
{
    stopServer(m_process);
}

QString S3rverFixture::put(const std::string& key, const std::filesystem::path& file) const
{
    QProcess upload;
    upload.setProcessChannelMode(QProcess::MergedChannels);
    upload.start(node(),
        {QStringLiteral("-e"), QString::fromLatin1(kPut), QStringLiteral("--"),
            QString::fromStdString(endpoint() + "/" + m_bucket + "/")
                + QUrl::toPercentEncoding(QString::fromStdString(key), "/"),
            QString::fromStdString(file.string())});
    if (!upload.waitForFinished(60000) || upload.exitStatus() != QProcess::NormalExit)
        return QStringLiteral("the upload of ") + QString::fromStdString(key)
            + QStringLiteral(" did not finish");
    if (upload.exitCode() != 0)
        return QStringLiteral("the upload of ") + QString::fromStdString(key)
            + QStringLiteral(" failed: ") + QString::fromUtf8(upload.readAll());
    return {};
}

std::string S3rverFixture::endpoint() const
{
    return "http://127.0.0.1:" + std::to_string(m_port);
}

} // namespace fixtures
