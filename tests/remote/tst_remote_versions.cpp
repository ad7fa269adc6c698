// Which version of each remote file a command read. A save asks the server again, before its
// commit point, whether every file it read is still that version (HttpTransport::revalidate: a
// HEAD with If-Match, a GET of one byte where HEAD is refused; an address that expired asked
// for again); `verify` and `diff` state the versions they read. Against FaultServers and
// Debian's nginx on 127.0.0.1.
#include "core/io/block_cache.h"
#include "core/remote/http_source.h"
#include "core/remote/http_transport.h"
#include "tests/support/cli_run.h"
#include "tests/support/fault_server.h"
#include "tests/support/nginx_fixture.h"
#include "tests/support/quick_http.h"
#include "tests/support/result_checks.h"
#include "tests/support/served_models.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>

using namespace repack;
using fixtures::FaultRequest;
using fixtures::FaultServer;
namespace fs = std::filesystem;

namespace {

const std::string kBytes(1000, 'x');

// A server whose first request (the stat that opens the file) is answered as kBytes with ETag
// "v1", and every later one by `later`.
struct FileServer {
    using Answer = std::function<void(int socket, const FaultRequest& request)>;
    explicit FileServer(Answer answerLater)
        : later(std::move(answerLater))
    {
    }
    Answer later;
    FaultServer server{[this](int socket, const FaultRequest& request, int index) {
        if (index == 0)
            FaultServer::answerAsFile(socket, request, kBytes, "\"v1\"");
        else
            later(socket, request);
    }};
};

// The file at `server`'s /f, as its stat found it.
Result<RemoteFile> statOf(HttpTransport& transport, const FaultServer& server)
{
    return transport.stat(server.url("f"));
}

QJsonObject jsonOf(const QByteArray& text)
{
    return QJsonDocument::fromJson(text).object();
}

} // namespace

class TestRemoteVersions : public QObject {
    Q_OBJECT
private slots:
    void theSameVersionIsAskedWithIfMatch();
    void anotherVersionIsChanged_data();
    void anotherVersionIsChanged();
    void aRefusedHeadIsAskedByAGetOfOneByte_data();
    void aRefusedHeadIsAskedByAGetOfOneByte();
    void aWeakEtagIsComparedNotSent();
    void aServerThatCannotTellIsAnError();
    void anExpiredAddressIsAskedForAgain_data();
    void anExpiredAddressIsAskedForAgain();
    void verifyAndDiffStateTheVersionsTheyRead();
};

void TestRemoteVersions::theSameVersionIsAskedWithIfMatch()
{
    FileServer files([](int socket, const FaultRequest& request) {
        FaultServer::answerAsFile(socket, request, kBytes, "\"v1\"");
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    auto file = statOf(transport, files.server);
    QVERIFY_OK(file);
    QVERIFY_OK(transport.revalidate(*file));
    const auto requests = files.server.requests();
    QCOMPARE(requests.size(), size_t(2));
    QCOMPARE(requests[1].method, std::string("HEAD"));
    QCOMPARE(requests[1].header("if-match"), std::string("\"v1\""));
}

void TestRemoteVersions::anotherVersionIsChanged_data()
{
    QTest::addColumn<QString>("answer");
    QTest::addColumn<QString>("said");
    QTest::addRow("another ETag") << "etag"
                                  << "ETag \"v1\" -> \"v2\"";
    QTest::addRow("If-Match refused (412)") << "412"
                                            << "no longer has ETag \"v1\"";
    QTest::addRow("another size") << "size"
                                  << "size 1000 -> 999";
    QTest::addRow("gone (404)") << "404"
                                << "no longer on the server (HTTP 404)";
}

void TestRemoteVersions::anotherVersionIsChanged()
{
    QFETCH(QString, answer);
    QFETCH(QString, said);
    FileServer files([answer](int socket, const FaultRequest& request) {
        if (answer == "etag")
            FaultServer::answerAsFile(socket, request, kBytes, "\"v2\"");
        else if (answer == "size")
            FaultServer::answerAsFile(socket, request, kBytes.substr(1), "\"v1\"");
        else if (answer == "412")
            FaultServer::respond(socket, "412 Precondition Failed", {}, {});
        else
            FaultServer::respond(socket, "404 Not Found", {}, "no");
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    auto file = statOf(transport, files.server);
    QVERIFY_OK(file);
    const Status now = transport.revalidate(*file);
    QVERIFY_FAILS_WITH(now, files.server.url("f") + ": ");
    QVERIFY_FAILS_WITH(now, said.toStdString());
    QCOMPARE(now.error().kind, ErrorKind::Changed);
}

void TestRemoteVersions::aRefusedHeadIsAskedByAGetOfOneByte_data()
{
    QTest::addColumn<QString>("head"); // the answer to HEAD
    QTest::addColumn<QString>("etag"); // of the file when asked again
    QTest::addRow("HEAD refused, the same version") << "403"
                                                    << "\"v1\"";
    QTest::addRow("HEAD refused, another version") << "403"
                                                   << "\"v2\"";
    QTest::addRow("HEAD without the ETag, the same version") << "no etag"
                                                             << "\"v1\"";
    QTest::addRow("HEAD without the ETag, another version") << "no etag"
                                                            << "\"v2\"";
}

// An address signed for GET alone (a CDN's) refuses HEAD with 403, and a HEAD may say less
// than the GET that opened the file (no ETag): a GET of the first byte, with If-Match and
// checked as every read is, asks instead.
void TestRemoteVersions::aRefusedHeadIsAskedByAGetOfOneByte()
{
    QFETCH(QString, head);
    QFETCH(QString, etag);
    FileServer files([head, etag](int socket, const FaultRequest& request) {
        if (request.method == "HEAD" && head == "403")
            FaultServer::respond(socket, "403 Forbidden", {}, {});
        else if (request.method == "HEAD")
            FaultServer::respond(socket, "200 OK", {"Content-Length: 1000"}, {});
        else
            FaultServer::answerAsFile(socket, request, kBytes, etag.toStdString());
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    auto file = statOf(transport, files.server);
    QVERIFY_OK(file);
    const Status now = transport.revalidate(*file);
    if (etag == "\"v1\"")
        QVERIFY_OK(now);
    else
        QVERIFY_FAILS_WITH(now, "ETag \"v1\" -> \"v2\"");
    const auto requests = files.server.requests();
    QCOMPARE(requests.size(), size_t(3));
    QCOMPARE(requests[2].method, std::string("GET"));
    QCOMPARE(requests[2].range, (std::make_optional(std::make_pair(uint64_t(0), uint64_t(0)))));
    QCOMPARE(requests[2].header("if-match"), std::string("\"v1\""));
}

// A weak ETag says no byte is the same: it is compared, never sent as If-Match.
void TestRemoteVersions::aWeakEtagIsComparedNotSent()
{
    std::atomic<int> asked{0};
    FaultServer server([&asked](int socket, const FaultRequest& request, int) {
        FaultServer::answerAsFile(socket, request, kBytes, asked++ == 0 ? "W/\"a\"" : "W/\"b\"");
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    auto file = transport.stat(server.url("f"));
    QVERIFY_OK(file);
    QVERIFY_FAILS_WITH(transport.revalidate(*file), "ETag W/\"a\" -> W/\"b\"");
    QCOMPARE(server.requests().back().header("if-match"), std::string());
}

// Not knowing is no answer: a server that fails the question fails the save, saying why.
void TestRemoteVersions::aServerThatCannotTellIsAnError()
{
    FileServer files([](int socket, const FaultRequest&) {
        FaultServer::respond(socket, "500 Internal Server Error", {}, "down");
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    auto file = statOf(transport, files.server);
    QVERIFY_OK(file);
    const Status now = transport.revalidate(*file);
    QVERIFY_FAILS_WITH(now, "HTTP 500");
    QCOMPARE(now.error().kind, ErrorKind::Io);
}

void TestRemoteVersions::anExpiredAddressIsAskedForAgain_data()
{
    QTest::addColumn<QString>("etag"); // of the file at the address given again
    QTest::addRow("the same version there") << "\"v1\"";
    QTest::addRow("another version there") << "\"v2\"";
}

// The address the reads went to has expired by the time the save asks (403, as a CDN's signed
// address answers): the file's address is asked for again and the file stated there is the
// answer, as a read refused there would be.
void TestRemoteVersions::anExpiredAddressIsAskedForAgain()
{
    QFETCH(QString, etag);
    FaultServer server([etag](int socket, const FaultRequest& request, int index) {
        if (request.target == "/new")
            FaultServer::answerAsFile(socket, request, kBytes, etag.toStdString());
        else if (index == 0)
            FaultServer::answerAsFile(socket, request, kBytes, "\"v1\"");
        else
            FaultServer::respond(socket, "403 Forbidden", {}, "expired");
    });
    int relocations = 0;
    BlockCache cache;
    auto source = HttpSource::open(server.url("old"), fixtures::quickHttpOptions(), nullptr, &cache,
        FileRole::Data, [&](const CancelToken*) -> Result<std::string> {
            ++relocations;
            return server.url("new");
        });
    QVERIFY_OK(source);
    const Status now = (*source)->revalidate();
    if (etag == "\"v1\"")
        QVERIFY_OK(now);
    else
        QVERIFY_FAILS_WITH(now, "ETag \"v1\" -> \"v2\"");
    QCOMPARE(relocations, 1);
}

// `verify` and `diff` of a model on a server say which version of each of its files they read:
// in their JSON ("sources": name, version, bytes) and in one line of their text.
void TestRemoteVersions::verifyAndDiffStateTheVersionsTheyRead()
{
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    fixtures::writeModelFile(
        fixtures::servedModel(nginx.www() / "m", true), nginx.www() / "m" / "model.onnx");
    const QString why = nginx.start();
    QVERIFY2(why.isEmpty(), qPrintable(why));
    const QString url = QString::fromStdString(nginx.url("m/model.onnx"));
    const QString local = QString::fromStdString((nginx.www() / "m" / "model.onnx").string());
    const std::map<QString, qint64> files{{url, qint64(fs::file_size(local.toStdString()))},
        {QString::fromStdString(nginx.url("m/w.bin")),
            qint64(fs::file_size(nginx.www() / "m" / "w.bin"))}};
    const auto checkSources = [&](const QJsonArray& sources, const QString& side) {
        QCOMPARE(sources.size(), qsizetype(files.size()));
        for (const auto& value : sources) {
            const QJsonObject source = value.toObject();
            QVERIFY2(files.count(source["name"].toString()), qPrintable(source["name"].toString()));
            QCOMPARE(source["bytes"].toInteger(), files.at(source["name"].toString()));
            QVERIFY2(source["version"].toString().startsWith("etag \""),
                qPrintable(source["version"].toString()));
            QCOMPARE(source["side"].toString(), side);
        }
    };

    const auto verified = fixtures::runCli({"verify", "--json", url});
    QVERIFY2(verified.exitCode == 0, verified.err.constData());
    checkSources(jsonOf(verified.out)["sources"].toArray(), QString());
    const auto verifiedText = fixtures::runCli({"verify", url});
    QVERIFY2(verifiedText.out.contains("versions read: " + url.toUtf8() + " (etag \""),
        verifiedText.out.constData());
    const auto onDisk = fixtures::runCli({"verify", "--json", local});
    QCOMPARE(jsonOf(onDisk.out)["sources"].toArray(), QJsonArray());
    QVERIFY(!fixtures::runCli({"verify", local}).out.contains("versions read"));

    const auto diffed = fixtures::runCli({"diff", "--json", url, local});
    QVERIFY2(diffed.exitCode == 0, diffed.err.constData());
    checkSources(jsonOf(diffed.out)["sources"].toArray(), "a");
    const auto diffedText = fixtures::runCli({"diff", local, url});
    QVERIFY2(diffedText.out.contains("versions read: " + url.toUtf8() + " (etag \""),
        diffedText.out.constData());
}

QTEST_GUILESS_MAIN(TestRemoteVersions)
#include "tst_remote_versions.moc"
