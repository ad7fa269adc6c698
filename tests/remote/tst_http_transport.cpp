// Files read by HTTP range requests (core/remote/http_transport.h): exact ranges from Debian's
// nginx, a file replaced on the server is Changed, and the faults nginx never makes (a 200 to a
// range request, a wrong Content-Range, a short body, a 503, a stall) from a FaultServer. Every
// server listens on 127.0.0.1 only.
#include "core/remote/http_response.h"
#include "core/remote/http_transport.h"
#include "tests/support/fault_server.h"
#include "tests/support/nginx_fixture.h"
#include "tests/support/quick_http.h"
#include "tests/support/result_checks.h"

#include <QTest>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <thread>

using namespace repack;
using fixtures::FaultRequest;
using fixtures::FaultServer;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// Bytes that differ from their neighbours, so a shifted range cannot pass for the right one.
std::string payload(size_t size, int seed = 0)
{
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i)
        bytes[i] = static_cast<char>((i * 7 + i / 251 + static_cast<size_t>(seed)) & 0xff);
    return bytes;
}

std::string text(const std::vector<std::byte>& bytes)
{
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

void writeFile(const fs::path& path, const std::string& bytes)
{
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

const std::string kEtag = "\"5f-abc\"";

// Answers as a static file server does (FaultServer::answerAsFile), with kEtag.
void answerAsAFile(int socket, const FaultRequest& request, const std::string& bytes,
    size_t sendAtMost = std::string::npos)
{
    FaultServer::answerAsFile(socket, request, bytes, kEtag, sendAtMost);
}

// What `read` returned on a thread of its own, and whether it did within `limit`; when not,
// `server` is stopped (its stalls end) so that the test fails instead of hanging. `meanwhile`
// runs on the test's thread while it reads.
struct ThreadRead {
    bool inTime = false;
    Status status;
};
ThreadRead readOnAThread(const std::function<Status()>& read, FaultServer& server,
    std::chrono::seconds limit, const std::function<void()>& meanwhile = {})
{
    ThreadRead result;
    std::promise<void> finished;
    std::future<void> done = finished.get_future();
    std::thread reader([&] {
        result.status = read();
        finished.set_value();
    });
    if (meanwhile)
        meanwhile();
    result.inTime = done.wait_for(limit) == std::future_status::ready;
    server.stop();
    reader.join();
    return result;
}

} // namespace

class TestHttpTransport : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void contentRangeIsParsedStrictly_data();
    void contentRangeIsParsedStrictly();

    void statGivesSizeAndValidators();
    void statOfAMissingFileIsNotFound();
    void readsExactlyTheRangeAsked_data();
    void readsExactlyTheRangeAsked();
    void aRangePastTheEndIsRefusedWithoutARequest_data();
    void aRangePastTheEndIsRefusedWithoutARequest();
    void aFileReplacedOnTheServerIsChanged();
    void aServerDownIsAnErrorNamingTheUrlWithoutSecrets();
    void withoutAStrongEtagTheDateGuardsTheReads();

    void aServerIgnoringRangeIsRefusedWithoutReadingItsBody();
    void aWrongContentRangeIsRefused_data();
    void aWrongContentRangeIsRefused();
    void aShortBodyIsRefused();
    void aBodyCutShortResumesFromTheByteReceived();
    void aBodyWithoutLengthEndingEarlyIsReadOn();
    void transientFailuresAreTriedAgain_data();
    void transientFailuresAreTriedAgain();
    void aRefusalIsNotTriedAgain();
    void aUrlSignedForGetIsStatByAGetOfOneByte();
    void statReadingGivesTheFirstBytesInOneRequest_data();
    void statReadingGivesTheFirstBytesInOneRequest();
    void statReadingOfAServerIgnoringRangeAsksHead();
    void aStalledBodyTimesOut();
    void cancelStopsAStalledTransfer();
    void authHeadersStayWithinTheOrigin();
    void aCredentialGoesOnlyToItsOrigin();
    void aLocationThatCannotBeParsedIsNotFollowed_data();
    void aLocationThatCannotBeParsedIsNotFollowed();
    void retryAfterIsClampedBeforeConversion_data();
    void retryAfterIsClampedBeforeConversion();
    void fuzzRetryAfterTenDigits();
    void fuzzLocationPercentEncodedDigits();
    void aRangeOfUnknownTotalIsReadWhenTheSizeIsKnown();
    void anImplausibleSizeIsRefused();
    void aValidatorWithControlCharactersIsRefused();
    void aShorterFileIsSaidToBeShorter();
    void everyRequestSaysWhoAsks();
    void theCommandsRetryBudgetBoundsEveryRequest();
    void aWaitIsSaidToTheCommandsToken();
    void aTrickleIsAStallNotRetried();

private:
    // Starts nginx serving `name` = `bytes`, and stats it; an error says why nginx did not start.
    Result<RemoteFile> serveAndStat(fixtures::NginxFixture& nginx, HttpTransport& transport,
        const std::string& name, const std::string& bytes);
};

void TestHttpTransport::initTestCase()
{
    // A proxy of the environment must not see loopback requests.
    qputenv("NO_PROXY", "127.0.0.1,localhost");
    qputenv("no_proxy", "127.0.0.1,localhost");
}

void TestHttpTransport::contentRangeIsParsedStrictly_data()
{
    QTest::addColumn<QString>("header");
    QTest::addColumn<bool>("valid");
    QTest::addRow("a range") << "bytes 0-99/1000" << true;
    QTest::addRow("the last byte") << "bytes 999-999/1000" << true;
    QTest::addRow("unknown total") << "bytes 0-99/*" << true;
    QTest::addRow("unknown total, last before first") << "bytes 9-3/*" << false;
    QTest::addRow("last before first") << "bytes 9-3/1000" << false;
    QTest::addRow("last past the total") << "bytes 0-1000/1000" << false;
    QTest::addRow("another unit") << "items 0-9/10" << false;
    QTest::addRow("a sign") << "bytes -1-9/10" << false;
    QTest::addRow("trailing text") << "bytes 0-9/10x" << false;
}

void TestHttpTransport::contentRangeIsParsedStrictly()
{
    QFETCH(QString, header);
    QFETCH(bool, valid);
    const auto range = parseContentRange(header.toStdString());
    QCOMPARE(range.has_value(), valid);
}

Result<RemoteFile> TestHttpTransport::serveAndStat(fixtures::NginxFixture& nginx,
    HttpTransport& transport, const std::string& name, const std::string& bytes)
{
    writeFile(nginx.www() / name, bytes);
    if (const QString why = nginx.start(); !why.isEmpty())
        return Error::io(why.toStdString());
    return transport.stat(nginx.url(name));
}

void TestHttpTransport::statGivesSizeAndValidators()
{
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = serveAndStat(nginx, transport, "m.bin", payload(100000));
    QVERIFY_OK(file);
    QCOMPARE(file->size, 100000u);
    QVERIFY2(file->strongEtag(), file->etag.c_str());
    QVERIFY(!file->lastModified.empty());
    QCOMPARE(file->location, nginx.url("m.bin"));
}

void TestHttpTransport::statOfAMissingFileIsNotFound()
{
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    HttpTransport transport(fixtures::quickHttpOptions());
    QVERIFY_OK(serveAndStat(nginx, transport, "m.bin", payload(10)));
    const auto file = transport.stat(nginx.url("other.bin"));
    QVERIFY_FAILS_WITH(file, nginx.url("other.bin") + ": not on the server (HTTP 404)");
    QCOMPARE(file.error().kind, ErrorKind::NotFound);
}

void TestHttpTransport::readsExactlyTheRangeAsked_data()
{
    QTest::addColumn<quint64>("offset");
    QTest::addColumn<quint64>("length");
    QTest::addRow("the first byte") << quint64(0) << quint64(1);
    QTest::addRow("the last byte") << quint64(99999) << quint64(1);
    QTest::addRow("the whole file") << quint64(0) << quint64(100000);
    QTest::addRow("a middle range") << quint64(4097) << quint64(31000);
    QTest::addRow("up to the end") << quint64(65536) << quint64(100000 - 65536);
    QTest::addRow("nothing") << quint64(500) << quint64(0);
}

void TestHttpTransport::readsExactlyTheRangeAsked()
{
    QFETCH(quint64, offset);
    QFETCH(quint64, length);
    const std::string bytes = payload(100000);
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = serveAndStat(nginx, transport, "m.bin", bytes);
    QVERIFY_OK(file);
    const auto read = transport.read(*file, offset, length);
    QVERIFY_OK(read);
    QCOMPARE(read->size(), length);
    QVERIFY(text(*read) == bytes.substr(offset, length));
    // Again on the same transport (and handle): as exact.
    std::vector<std::byte> again(length);
    QVERIFY_OK(transport.read(*file, offset, again));
    QVERIFY(again == *read);
}

void TestHttpTransport::aRangePastTheEndIsRefusedWithoutARequest_data()
{
    QTest::addColumn<quint64>("offset");
    QTest::addColumn<quint64>("length");
    QTest::addRow("one byte too many") << quint64(99990) << quint64(11);
    QTest::addRow("starting past the end") << quint64(100001) << quint64(1);
    QTest::addRow("a length that wraps around") << quint64(10) << quint64(-5);
}

void TestHttpTransport::aRangePastTheEndIsRefusedWithoutARequest()
{
    QFETCH(quint64, offset);
    QFETCH(quint64, length);
    FaultServer server([](int socket, const FaultRequest& request, int) {
        answerAsAFile(socket, request, payload(100000));
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_OK(file);
    const auto read = transport.read(*file, offset, length);
    QVERIFY_FAILS_WITH(read, server.url("m.bin") + ": bytes " + std::to_string(offset) + "-");
    QVERIFY_FAILS_WITH(read, "are past the end of the file (100000 bytes)");
    QCOMPARE(read.error().kind, ErrorKind::Corrupt);
    QCOMPARE(server.requests().size(), size_t(1)); // the HEAD only
}

void TestHttpTransport::aFileReplacedOnTheServerIsChanged()
{
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = serveAndStat(nginx, transport, "m.bin", payload(100000));
    QVERIFY_OK(file);
    QVERIFY_OK(transport.read(*file, 0, 1000));
    // Another file of the same size under the name, with another time (nginx's ETag is
    // mtime-size): only the validator tells it apart.
    const fs::path path = nginx.www() / "m.bin";
    writeFile(nginx.www() / "new.bin", payload(100000, 1));
    fs::last_write_time(nginx.www() / "new.bin", fs::last_write_time(path) + 10s);
    fs::rename(nginx.www() / "new.bin", path);
    const auto read = transport.read(*file, 0, 1000);
    QVERIFY_FAILS_WITH(read, nginx.url("m.bin") + ": changed on the server since it was opened");
    QCOMPARE(read.error().kind, ErrorKind::Changed);
}

void TestHttpTransport::aServerDownIsAnErrorNamingTheUrlWithoutSecrets()
{
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    HttpTransport transport(fixtures::quickHttpOptions());
    QVERIFY_OK(serveAndStat(nginx, transport, "m.bin", payload(1000)));
    std::string url = nginx.url("m.bin?token=SECRET");
    url.insert(url.find("127.0.0.1"), "user:PASSWORD@");
    const auto file = transport.stat(url);
    QVERIFY_OK(file);
    nginx.stop();
    const auto read = transport.read(*file, 0, 10);
    QVERIFY_FAILS_WITH(read, nginx.url("m.bin") + ": ");
    QVERIFY_FAILS_WITH(read, "(after 3 attempts)");
    QCOMPARE(read.error().kind, ErrorKind::Io);
    QVERIFY2(
        read.error().message.find("SECRET") == std::string::npos, read.error().message.c_str());
    QVERIFY2(
        read.error().message.find("PASSWORD") == std::string::npos, read.error().message.c_str());
}

void TestHttpTransport::withoutAStrongEtagTheDateGuardsTheReads()
{
    // A weak ETag cannot be asked for with If-Match: the reads send If-Range with the date, and
    // a server whose file is newer answers with all of it (200), as RFC 9110 13.1.5 says.
    const std::string bytes = payload(1000);
    const std::string opened = "Sun, 06 Dec 2026 10:00:00 GMT";
    std::atomic<bool> replaced{false};
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        const std::string date = replaced ? "Sun, 06 Dec 2026 11:00:00 GMT" : opened;
        if (request.method == "HEAD") {
            FaultServer::respond(
                socket, "200 OK", {"Content-Length: 1000", "Last-Modified: " + date}, {});
        } else if (request.header("if-range") != date) {
            FaultServer::respond(socket, "200 OK", {"Last-Modified: " + date}, bytes);
        } else {
            const auto [first, last] = *request.range;
            FaultServer::respond(socket, "206 Partial Content",
                {"Content-Range: bytes " + std::to_string(first) + "-" + std::to_string(last)
                        + "/1000",
                    "Last-Modified: " + date},
                bytes.substr(first, last - first + 1));
        }
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_OK(file);
    QVERIFY(!file->strongEtag());
    QCOMPARE(file->lastModified, opened);
    const auto read = transport.read(*file, 0, 100);
    QVERIFY_OK(read);
    QVERIFY(text(*read) == bytes.substr(0, 100));
    replaced = true;
    const auto again = transport.read(*file, 0, 100);
    QVERIFY_FAILS_WITH(again,
        server.url("m.bin") + ": changed on the server since it was opened (Last-Modified " + opened
            + " -> Sun, 06 Dec 2026 11:00:00 GMT)");
    QCOMPARE(again.error().kind, ErrorKind::Changed);
    QCOMPARE(server.requests().back().header("if-match"), std::string());
}

void TestHttpTransport::aServerIgnoringRangeIsRefusedWithoutReadingItsBody()
{
    // A 200 with the whole of a large file: the transfer stops at its first bytes.
    constexpr size_t kLarge = 1ULL << 30;
    std::atomic<size_t> sent{0};
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        if (request.method == "HEAD") {
            answerAsAFile(socket, request, payload(1000));
            return;
        }
        if (!FaultServer::send(socket,
                "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(kLarge)
                    + "\r\nETag: " + kEtag + "\r\n\r\n"))
            return;
        const std::string chunk(1 << 20, 'x');
        while (sent < kLarge && !server.stopping() && FaultServer::send(socket, chunk))
            sent += chunk.size();
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    auto file = transport.stat(server.url("m.bin"));
    QVERIFY_OK(file);
    const auto read = transport.read(*file, 10, 100);
    QVERIFY_FAILS_WITH(read, server.url("m.bin") + ": the server ignores range requests");
    QCOMPARE(read.error().kind, ErrorKind::Corrupt);
    QVERIFY2(sent < kLarge / 4, std::to_string(sent).c_str());
}

void TestHttpTransport::aWrongContentRangeIsRefused_data()
{
    QTest::addColumn<QString>("contentRange");
    QTest::addColumn<QString>("message");
    QTest::addColumn<int>("kind");
    QTest::addRow("another first byte")
        << "bytes 11-109/1000"
        << "the server answered bytes 11-109/1000 to a request of bytes 10-109"
        << int(ErrorKind::Corrupt);
    QTest::addRow("another last byte")
        << "bytes 10-108/1000"
        << "the server answered bytes 10-108/1000" << int(ErrorKind::Corrupt);
    QTest::addRow("none") << ""
                          << "the server's Content-Range \"\" is not \"bytes FIRST-LAST/SIZE\""
                          << int(ErrorKind::Corrupt);
    QTest::addRow("another size") << "bytes 10-109/1001"
                                  << "changed on the server since it was opened (size 1000 -> 1001)"
                                  << int(ErrorKind::Changed);
}

void TestHttpTransport::aWrongContentRangeIsRefused()
{
    QFETCH(QString, contentRange);
    QFETCH(QString, message);
    QFETCH(int, kind);
    const std::string bytes = payload(1000);
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        if (request.method == "HEAD") {
            answerAsAFile(socket, request, bytes);
            return;
        }
        std::vector<std::string> headers{"ETag: " + kEtag};
        if (!contentRange.isEmpty())
            headers.push_back("Content-Range: " + contentRange.toStdString());
        FaultServer::respond(socket, "206 Partial Content", headers, bytes.substr(10, 100));
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_OK(file);
    const auto read = transport.read(*file, 10, 100);
    QVERIFY_FAILS_WITH(read, message.toStdString());
    QCOMPARE(int(read.error().kind), kind);
}

void TestHttpTransport::aShortBodyIsRefused()
{
    // Every answer promises the range asked and sends half of it: tried again from where it
    // ended, until the attempts run out.
    const std::string bytes = payload(1000);
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        const uint64_t asked = request.range ? request.range->second - request.range->first + 1 : 0;
        answerAsAFile(socket, request, bytes, asked / 2);
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_OK(file);
    const auto read = transport.read(*file, 0, 100);
    QVERIFY_FAILS_WITH(read, server.url("m.bin") + ": ");
    QVERIFY_FAILS_WITH(read, "(after 3 attempts)");
    QCOMPARE(read.error().kind, ErrorKind::Io);
    const auto requests = server.requests();
    QCOMPARE(requests.size(), size_t(4));
    QCOMPARE(requests[2].range->first, 50u);
    QCOMPARE(requests[3].range->first, 75u);
}

void TestHttpTransport::aBodyCutShortResumesFromTheByteReceived()
{
    // The first GET (request 1) gets its head and 3000 bytes, then the connection drops.
    const std::string bytes = payload(100000);
    FaultServer server([&](int socket, const FaultRequest& request, int index) {
        answerAsAFile(socket, request, bytes, index == 1 ? 3000 : std::string::npos);
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_OK(file);
    const auto read = transport.read(*file, 500, 20000);
    QVERIFY_OK(read);
    QVERIFY(text(*read) == bytes.substr(500, 20000));
    const auto requests = server.requests();
    QCOMPARE(requests.size(), size_t(3));
    QVERIFY(requests[2].range == std::make_pair(uint64_t(3500), uint64_t(20499)));
    QCOMPARE(requests[2].header("if-match"), kEtag);
}

void TestHttpTransport::aBodyWithoutLengthEndingEarlyIsReadOn()
{
    // Each GET's body has no Content-Length and ends (the connection closes) after 3000 bytes:
    // an answer libcurl takes as whole. The reads ask for the rest until they have it all.
    const std::string bytes = payload(100000);
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        if (request.method == "HEAD") {
            answerAsAFile(socket, request, bytes);
            return;
        }
        const auto [first, last] = *request.range;
        FaultServer::send(socket,
            "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " + std::to_string(first) + "-"
                + std::to_string(last) + "/100000\r\nETag: " + kEtag
                + "\r\nConnection: close\r\n\r\n" + bytes.substr(first, 3000));
    });
    HttpTransport transport(fixtures::quickHttpOptions()); // 3 answers at the most
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_OK(file);
    const auto read = transport.read(*file, 100, 9000);
    QVERIFY_OK(read);
    QVERIFY(text(*read) == bytes.substr(100, 9000));
    QCOMPARE(server.requests().size(), size_t(4));
    const auto more = transport.read(*file, 100, 9001);
    QVERIFY_FAILS_WITH(
        more, server.url("m.bin") + ": the server sent 9000 of the 9001 bytes asked");
}

void TestHttpTransport::transientFailuresAreTriedAgain_data()
{
    QTest::addColumn<QString>("status");
    QTest::addColumn<QString>("header");
    QTest::addRow("503") << "503 Service Unavailable"
                         << "";
    QTest::addRow("500") << "500 Internal Server Error"
                         << "";
    QTest::addRow("429, Retry-After capped") << "429 Too Many Requests"
                                             << "Retry-After: 3600";
    QTest::addRow("503, Retry-After capped") << "503 Service Unavailable"
                                             << "Retry-After: 3600";
}

void TestHttpTransport::transientFailuresAreTriedAgain()
{
    QFETCH(QString, status);
    QFETCH(QString, header);
    const std::string bytes = payload(1000);
    FaultServer server([&](int socket, const FaultRequest& request, int index) {
        if (index == 0 || index == 2) { // the HEAD, then the first GET
            std::vector<std::string> headers;
            if (!header.isEmpty())
                headers.push_back(header.toStdString());
            FaultServer::respond(socket, status.toStdString(), headers, "try again later");
            return;
        }
        answerAsAFile(socket, request, bytes);
    });
    HttpTransport transport(fixtures::quickHttpOptions()); // Retry-After capped at 100 ms
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_OK(file);
    QCOMPARE(file->size, 1000u);
    const auto read = transport.read(*file, 100, 200);
    QVERIFY_OK(read);
    QVERIFY(text(*read) == bytes.substr(100, 200));
    QCOMPARE(server.requests().size(), size_t(4));
}

void TestHttpTransport::aRefusalIsNotTriedAgain()
{
    FaultServer server([](int socket, const FaultRequest&, int) {
        FaultServer::respond(socket, "403 Forbidden", {}, "no");
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = transport.stat(server.url("m.bin?X-Signature=SECRET"));
    // A HEAD refused is asked once more, as a GET (a URL may be signed for GET alone); neither
    // refusal is tried again.
    QVERIFY_FAILS_WITH(file, server.url("m.bin") + ": HTTP 403 to GET");
    QVERIFY2(
        file.error().message.find("SECRET") == std::string::npos, file.error().message.c_str());
    const auto requests = server.requests();
    QCOMPARE(requests.size(), size_t(2));
    QCOMPARE(requests[0].method, std::string("HEAD"));
    QCOMPARE(requests[1].method, std::string("GET"));
}

void TestHttpTransport::aUrlSignedForGetIsStatByAGetOfOneByte()
{
    // A presigned URL (S3, a CDN) is signed for GET: its HEAD is refused.
    const std::string bytes = payload(3000);
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        if (request.method == "HEAD")
            FaultServer::respond(socket, "403 Forbidden", {}, {});
        else
            answerAsAFile(socket, request, bytes);
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = transport.stat(server.url("m.bin?X-Amz-Signature=S"));
    QVERIFY_OK(file);
    QCOMPARE(file->size, 3000u);
    QCOMPARE(file->etag, kEtag);
    auto requests = server.requests();
    QCOMPARE(requests.size(), size_t(2));
    QVERIFY(requests[1].range == std::make_pair(uint64_t(0), uint64_t(0)));
    const auto read = transport.read(*file, 2000, 1000);
    QVERIFY_OK(read);
    QVERIFY(text(*read) == bytes.substr(2000));
}

void TestHttpTransport::statReadingGivesTheFirstBytesInOneRequest_data()
{
    QTest::addColumn<int>("size");
    QTest::addColumn<int>("asked");
    QTest::newRow("a file longer than asked") << 5000 << 1024;
    QTest::newRow("a file shorter than asked") << 700 << 1024;
    QTest::newRow("a file of one byte") << 1 << 1024;
}

void TestHttpTransport::statReadingGivesTheFirstBytesInOneRequest()
{
    QFETCH(int, size);
    QFETCH(int, asked);
    const std::string bytes = payload(static_cast<size_t>(size), 3);
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        if (request.range && request.range->second >= bytes.size()) { // as nginx: cut to the end
            FaultRequest cut = request;
            cut.range->second = bytes.size() - 1;
            answerAsAFile(socket, cut, bytes);
            return;
        }
        answerAsAFile(socket, request, bytes);
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto first = transport.statReading(server.url("m.bin"), static_cast<uint64_t>(asked));
    QVERIFY_OK(first);
    QCOMPARE(first->file.size, uint64_t(size));
    QCOMPARE(first->file.etag, kEtag);
    QVERIFY(text(first->bytes) == bytes.substr(0, static_cast<size_t>(asked)));
    const auto requests = server.requests();
    QCOMPARE(requests.size(), size_t(1));
    QCOMPARE(requests[0].method, std::string("GET"));
    // The file it found is read as a stat's is: checked against its validators.
    const auto read = transport.read(first->file, 0, static_cast<uint64_t>(size));
    QVERIFY_OK(read);
    QVERIFY(text(*read) == bytes);
}

void TestHttpTransport::statReadingOfAServerIgnoringRangeAsksHead()
{
    std::atomic<size_t> sent{0};
    constexpr size_t kLarge = 64ULL << 20;
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        if (request.method == "HEAD") {
            answerAsAFile(socket, request, payload(1000));
            return;
        }
        if (!FaultServer::send(socket,
                "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(kLarge) + "\r\n\r\n"))
            return;
        const std::string chunk(1 << 20, 'x');
        while (sent < kLarge && !server.stopping() && FaultServer::send(socket, chunk))
            sent += chunk.size();
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto first = transport.statReading(server.url("m.bin"), 1024);
    QVERIFY_OK(first);
    QCOMPARE(first->file.size, 1000u); // the HEAD's answer
    QVERIFY(first->bytes.empty());
    QVERIFY2(sent < kLarge / 4, std::to_string(sent).c_str()); // the 200's body was not read
    const auto requests = server.requests();
    QCOMPARE(requests.size(), size_t(2));
    QCOMPARE(requests[1].method, std::string("HEAD"));
}

void TestHttpTransport::aStalledBodyTimesOut()
{
    const std::string bytes = payload(1000);
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        answerAsAFile(socket, request, bytes, 10);
        if (request.method == "HEAD")
            return;
        server.stall(socket);
    });
    HttpOptions options = fixtures::quickHttpOptions();
    options.stallTime = 1s;
    options.maxAttempts = 1;
    HttpTransport transport(options);
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_OK(file);
    std::vector<std::byte> into(100);
    const ThreadRead read
        = readOnAThread([&] { return transport.read(*file, 0, into); }, server, 60s);
    QVERIFY2(read.inTime, "the stalled read did not time out");
    QVERIFY_FAILS_WITH(read.status, server.url("m.bin") + ": the server stalled");
    QCOMPARE(read.status.error().kind, ErrorKind::Io);
}

void TestHttpTransport::cancelStopsAStalledTransfer()
{
    const std::string bytes = payload(1000);
    std::promise<void> stalled;
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        answerAsAFile(socket, request, bytes, 10);
        if (request.method == "HEAD")
            return;
        stalled.set_value();
        server.stall(socket);
    });
    HttpOptions options = fixtures::quickHttpOptions();
    options.stallTime = 600s; // only the cancel ends it
    HttpTransport transport(options);
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_OK(file);
    CancelToken cancel;
    std::vector<std::byte> into(100);
    bool wasStalled = false;
    const ThreadRead read
        = readOnAThread([&] { return transport.read(*file, 0, into, &cancel); }, server, 60s,
            [&] {
                wasStalled = stalled.get_future().wait_for(60s) == std::future_status::ready;
                cancel.cancel();
            });
    QVERIFY(wasStalled);
    QVERIFY2(read.inTime, "the cancelled read did not return");
    QVERIFY_FAILS_WITH(read.status, "reading " + server.url("m.bin") + " cancelled");
    QCOMPARE(read.status.error().kind, ErrorKind::Cancelled);
}

void TestHttpTransport::authHeadersStayWithinTheOrigin()
{
    // `start` redirects relatively to `moved`, which redirects to another port: another origin.
    const std::string bytes = payload(1000);
    FaultServer elsewhere([&](int socket, const FaultRequest& request, int) {
        answerAsAFile(socket, request, bytes);
    });
    FaultServer origin([&](int socket, const FaultRequest& request, int) {
        if (request.target == "/start")
            FaultServer::respond(socket, "302 Found", {"Location: /moved?x=1"}, {});
        else
            FaultServer::respond(
                socket, "307 Temporary Redirect", {"Location: " + elsewhere.url("cdn.bin")}, {});
    });
    HttpOptions options = fixtures::quickHttpOptions();
    options.credential = Credential{urlOrigin(origin.url("")), {"Authorization: Bearer TOKEN"}, {}};
    HttpTransport transport(options);
    const auto file = transport.stat(origin.url("start"));
    QVERIFY_OK(file);
    QCOMPARE(file->location, elsewhere.url("cdn.bin"));
    const auto read = transport.read(*file, 0, 1000);
    QVERIFY_OK(read);
    QVERIFY(text(*read) == bytes);

    const auto asked = origin.requests();
    QCOMPARE(asked.size(), size_t(2));
    QCOMPARE(asked[1].target, std::string("/moved?x=1"));
    for (const FaultRequest& request : asked)
        QCOMPARE(request.header("authorization"), std::string("Bearer TOKEN"));
    const auto served = elsewhere.requests();
    QCOMPARE(served.size(), size_t(2)); // the HEAD and the GET, neither with the token
    for (const FaultRequest& request : served)
        QCOMPARE(request.header("authorization"), std::string());
}

void TestHttpTransport::aCredentialGoesOnlyToItsOrigin()
{
    // The credential is registered for `hub`: a URL on `other` asked directly gets none, and a
    // redirect from `other` back to `hub` gets it again (the URL decides, not the path taken).
    const std::string bytes = payload(1000);
    FaultServer hub([&](int socket, const FaultRequest& request, int) {
        answerAsAFile(socket, request, bytes);
    });
    FaultServer other(
        [&](int socket, const FaultRequest&, int) {
            FaultServer::respond(socket, "302 Found", {"Location: " + hub.url("back.bin")}, {});
        },
        "127.0.0.2");
    HttpOptions options = fixtures::quickHttpOptions();
    options.credential = Credential{urlOrigin(hub.url("")), {"Authorization: Bearer TOKEN"}, {}};
    HttpTransport transport(options);
    const auto file = transport.stat(other.url("start"));
    QVERIFY_OK(file);
    QVERIFY_OK(transport.read(*file, 0, 10));
    QCOMPARE(other.requests().size(), size_t(1));
    QCOMPARE(other.requests()[0].header("authorization"), std::string());
    QCOMPARE(hub.requests().size(), size_t(2));
    for (const FaultRequest& request : hub.requests())
        QCOMPARE(request.header("authorization"), std::string("Bearer TOKEN"));
    QCOMPARE(urlOrigin("HTTP://Example.ORG/a"), std::string("http://example.org:80"));
    QCOMPARE(urlOrigin("https://hub@other/"), std::string("https://other:443"));
    QCOMPARE(urlOrigin("not a url"), std::string());
}

void TestHttpTransport::aLocationThatCannotBeParsedIsNotFollowed_data()
{
    QTest::addColumn<QString>("location");
    QTest::addColumn<QString>("error");
    QTest::addRow("no slash") << "http:127.0.0.2/steal"
                              << "cannot be parsed";
    QTest::addRow("backslashes") << "http:\\\\127.0.0.2\\steal"
                                 << "cannot be parsed";
    QTest::addRow("file") << "file:///etc/passwd"
                          << "a file: address";
    QTest::addRow("ftp") << "ftp://127.0.0.2/x"
                         << "a ftp: address";
}

void TestHttpTransport::aLocationThatCannotBeParsedIsNotFollowed()
{
    QFETCH(QString, location);
    QFETCH(QString, error);
    FaultServer server([&](int socket, const FaultRequest&, int) {
        FaultServer::respond(socket, "302 Found", {"Location: " + location.toStdString()}, {});
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY(!file);
    QVERIFY2(
        file.error().message.starts_with(server.url("m.bin") + ": "), file.error().message.c_str());
    QVERIFY2(file.error().message.find(error.toStdString()) != std::string::npos,
        file.error().message.c_str());
    QCOMPARE(server.requests().size(), size_t(1)); // the redirect was not followed anywhere
}

void TestHttpTransport::retryAfterIsClampedBeforeConversion_data()
{
    const auto now = std::chrono::system_clock::from_time_t(784111777); // 06 Nov 1994 08:49:37
    QTest::addColumn<QString>("value");
    QTest::addColumn<int>("seconds"); // -1: not a Retry-After
    QTest::addRow("seconds") << "7" << 7;
    QTest::addRow("zero") << "0" << 0;
    QTest::addRow("an hour, capped") << "3600" << 60;
    QTest::addRow("past 64 bits") << "99999999999999999999999999" << 60;
    QTest::addRow("leading zeros") << "0000000000000000000000000000005" << 5;
    QTest::addRow("IMF-fixdate, 10 s on") << "Sun, 06 Nov 1994 08:49:47 GMT" << 10;
    QTest::addRow("RFC 850 date") << "Sunday, 06-Nov-94 08:49:57 GMT" << 20;
    QTest::addRow("asctime date") << "Sun Nov  6 08:50:07 1994" << 30;
    QTest::addRow("a date far on") << "Fri, 31 Dec 9999 23:59:59 GMT" << 60;
    QTest::addRow("a date past") << "Sun, 06 Nov 1994 08:00:00 GMT" << 0;
    QTest::addRow("negative") << "-5" << -1;
    QTest::addRow("garbage") << "soon" << -1;
    QTest::addRow("a date and more") << "Sun, 06 Nov 1994 08:49:47 GMT x" << -1;
    QTest::addRow("empty") << "" << -1;
    (void)now;
}

void TestHttpTransport::retryAfterIsClampedBeforeConversion()
{
    QFETCH(QString, value);
    QFETCH(int, seconds);
    const auto now = std::chrono::system_clock::from_time_t(784111777);
    const auto parsed = parseRetryAfter(value.toStdString(), now, 60s);
    QCOMPARE(parsed.has_value(), seconds >= 0);
    if (parsed)
        QCOMPARE(static_cast<int>(parsed->count()), seconds);
}

// fuzz/corpus/http_answers/retry-after-ten-digits: seconds of ten digits or more were taken
// for the cap whatever the cap, so under a cap of a century 1732126519 s (55 years) was a century.
void TestHttpTransport::fuzzRetryAfterTenDigits()
{
    const auto seconds = [](const char* value, std::chrono::seconds cap) -> qint64 {
        const auto now = std::chrono::system_clock::from_time_t(784111777);
        return parseRetryAfter(value, now, cap).value_or(-1s).count();
    };
    const std::chrono::seconds century(int64_t{100} * 366 * 86400);
    const qint64 max = std::chrono::seconds::max().count();
    QCOMPARE(seconds("1732126519", century), qint64(1732126519));
    QCOMPARE(seconds("00000001732126519", century), qint64(1732126519));
    QCOMPARE(seconds("9223372036854775807", std::chrono::seconds::max()), max);
    QCOMPARE(seconds("9223372036854775806", std::chrono::seconds::max()), max - 1);
    QCOMPARE(seconds("18446744073709551616", std::chrono::seconds::max()), max);
    QCOMPARE(seconds("1732126519", 60s), qint64(60));
}

// fuzz/corpus/http_answers/location-percent-encoded-digits: a host of percent-encoded digits
// was resolved to "127.1", which libcurl reads again (and connects to) as 127.0.0.1: the URL
// resolveLocation gave was not the one connected to, and resolving it again changed it.
void TestHttpTransport::fuzzLocationPercentEncodedDigits()
{
    const std::string base = "https://huggingface.co/org/repo/resolve/main/model.onnx";
    for (const char* location : {"http://%31%32%37.1/x", "http://127.%31/x"}) {
        const auto resolved = resolveLocation(base, location);
        QVERIFY_OK(resolved);
        QCOMPARE(*resolved, std::string("http://127.0.0.1/x"));
        const auto again = resolveLocation(*resolved, *resolved);
        QVERIFY_OK(again);
        QCOMPARE(*again, *resolved);
    }
}

void TestHttpTransport::aRangeOfUnknownTotalIsReadWhenTheSizeIsKnown()
{
    // RFC 9110 allows "bytes A-B/*"; the size came from the HEAD.
    const std::string bytes = payload(1000);
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        if (request.method == "HEAD" || !request.range) {
            answerAsAFile(socket, request, bytes);
            return;
        }
        const auto [first, last] = *request.range;
        FaultServer::respond(socket, "206 Partial Content",
            {"ETag: " + kEtag,
                "Content-Range: bytes " + std::to_string(first) + "-" + std::to_string(last)
                    + "/*"},
            bytes.substr(first, last - first + 1));
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto first = transport.statReading(server.url("m.bin"), 100);
    QVERIFY_OK(first);
    QCOMPARE(first->file.size, 1000u); // the GET's answer gave no size: a HEAD did
    const auto read = transport.read(first->file, 100, 200);
    QVERIFY_OK(read);
    QVERIFY(text(*read) == bytes.substr(100, 200));
}

void TestHttpTransport::anImplausibleSizeIsRefused()
{
    FaultServer server([&](int socket, const FaultRequest&, int) {
        FaultServer::send(socket,
            "HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\nETag: " + kEtag
                + "\r\nConnection: close\r\n\r\n");
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_FAILS_WITH(file,
        server.url("m.bin")
            + ": the server says the file has "
              "9223372036854775807 bytes, more than any file this tool reads");
    QCOMPARE(file.error().kind, ErrorKind::Corrupt);
}

void TestHttpTransport::aValidatorWithControlCharactersIsRefused()
{
    // The ETag is sent back in If-Match: a CR in it would put a header line of the server's
    // choosing into every later request.
    FaultServer server([&](int socket, const FaultRequest&, int) {
        FaultServer::send(socket,
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nETag: \"a\"\rX-Injected: 1\r\n"
            "Connection: close\r\n\r\n");
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_FAILS_WITH(
        file, server.url("m.bin") + ": the server's ETag or Last-Modified holds control");
    QCOMPARE(server.requests().size(), size_t(1));
}

void TestHttpTransport::aShorterFileIsSaidToBeShorter()
{
    const std::string bytes = payload(1000);
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        if (request.method == "HEAD")
            answerAsAFile(socket, request, bytes);
        else
            FaultServer::respond(
                socket, "416 Range Not Satisfiable", {"Content-Range: bytes */500"}, {});
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_OK(file);
    const auto read = transport.read(*file, 600, 100);
    QVERIFY_FAILS_WITH(read,
        server.url("m.bin")
            + ": the file is shorter than the 1000 bytes "
              "the server said it has (HTTP 416 to a request of bytes 600-699)");
    QCOMPARE(read.error().kind, ErrorKind::Corrupt);
}

void TestHttpTransport::everyRequestSaysWhoAsks()
{
    const std::string bytes = payload(100);
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        answerAsAFile(socket, request, bytes);
    });
    HttpTransport transport(fixtures::quickHttpOptions());
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_OK(file);
    QVERIFY_OK(transport.read(*file, 0, 10));
    for (const FaultRequest& request : server.requests())
        QVERIFY2(request.header("user-agent").starts_with("onnx-repack/"),
            request.header("user-agent").c_str());
}

void TestHttpTransport::theCommandsRetryBudgetBoundsEveryRequest()
{
    // Each request may try 5 times, but the command has 3 retries in all: the second request
    // gets the one left, however the first one ended.
    FaultServer server([](int socket, const FaultRequest&, int index) {
        if (index == 2)
            FaultServer::respond(socket, "404 Not Found", {}, {});
        else
            FaultServer::respond(socket, "503 Service Unavailable", {}, "busy");
    });
    HttpOptions options = fixtures::quickHttpOptions();
    options.maxAttempts = 5;
    HttpTransport transport(options);
    CancelToken command;
    command.setRetryBudget(3);
    const auto first = transport.stat(server.url("a.bin"), &command); // 503, 503, 404
    QVERIFY(!first);
    QCOMPARE(command.retriesLeft(), 1);
    const auto second = transport.stat(server.url("b.bin"), &command); // 503, 503: none left
    QVERIFY_FAILS_WITH(second,
        server.url("b.bin")
            + ": HTTP 503 (after 2 attempts); the command "
              "has used all its retries");
    QCOMPARE(server.requests().size(), size_t(5));
    // Real progress gives retries back, up to the budget given and no further.
    command.received(CancelToken::kBytesPerRetry - 1);
    QCOMPARE(command.retriesLeft(), 0);
    command.received(1);
    QCOMPARE(command.retriesLeft(), 1);
    command.received(10 * CancelToken::kBytesPerRetry);
    QCOMPARE(command.retriesLeft(), 3);
}

void TestHttpTransport::aWaitIsSaidToTheCommandsToken()
{
    const std::string bytes = payload(100);
    FaultServer server([&](int socket, const FaultRequest& request, int index) {
        if (index % 2 == 0)
            FaultServer::respond(socket, "503 Service Unavailable", {}, "busy");
        else
            answerAsAFile(socket, request, bytes);
    });
    HttpOptions options = fixtures::quickHttpOptions();
    options.name = "the model";
    HttpTransport transport(options);
    CancelToken command;
    std::vector<std::string> heard;
    command.setWaitObserver([&](const std::string& what) { heard.push_back(what); });
    QVERIFY_OK(transport.stat(server.url("m.bin"), &command));
    QCOMPARE(heard.size(), size_t(2));
    QVERIFY2(heard[0].starts_with("127.0.0.1: the model, attempt 2 of 3 in "), heard[0].c_str());
    heard.clear();
    options.name.clear(); // a plain URL names its host itself
    HttpTransport plain(options);
    QVERIFY_OK(plain.stat(server.url("m.bin"), &command));
    QCOMPARE(heard.size(), size_t(2));
    QVERIFY2(heard[0].starts_with(server.url("m.bin") + ", attempt 2 of 3 in "), heard[0].c_str());
    QVERIFY2(heard[0].ends_with("(HTTP 503)"), heard[0].c_str());
    QCOMPARE(heard[1], std::string()); // the wait is over
}

void TestHttpTransport::aTrickleIsAStallNotRetried()
{
    // A few bytes, then silence, on every request: the average rate stays under the stall rule's,
    // so the read ends after the stall window, with no further attempt.
    const std::string bytes = payload(100000);
    FaultServer server([&](int socket, const FaultRequest& request, int) {
        if (request.method == "HEAD") {
            answerAsAFile(socket, request, bytes);
            return;
        }
        answerAsAFile(socket, request, bytes, 100);
        server.stall(socket);
    });
    HttpOptions options = fixtures::quickHttpOptions();
    options.stallTime = 1s;
    HttpTransport transport(options);
    const auto file = transport.stat(server.url("m.bin"));
    QVERIFY_OK(file);
    std::vector<std::byte> into(50000);
    const auto started = std::chrono::steady_clock::now();
    const ThreadRead read
        = readOnAThread([&] { return transport.read(*file, 0, into); }, server, 30s);
    QVERIFY2(read.inTime, "the trickle never ended");
    QVERIFY(std::chrono::steady_clock::now() - started < 10s);
    QVERIFY_FAILS_WITH(read.status, server.url("m.bin") + ": the server stalled");
    QCOMPARE(server.requests().size(), size_t(2)); // the HEAD and one GET
}

QTEST_GUILESS_MAIN(TestHttpTransport)
#include "tst_http_transport.moc"
