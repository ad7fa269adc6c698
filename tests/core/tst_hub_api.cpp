// The Hub's HTTP interface (issue 38): file and listing addresses as huggingface_hub builds
// them, what a resolve answer's headers say or why it refuses, and a listing's pages.
#include "core/io/hub_api.h"

#include <QTest>

#include <map>

using namespace repack;

namespace {

HeaderLookup headers(std::map<std::string, std::string> values)
{
    return [values](std::string_view name) -> std::optional<std::string> {
        for (const auto& [key, value] : values)
            if (QString::fromStdString(key).compare(
                    QString::fromUtf8(name.data(), qsizetype(name.size())), Qt::CaseInsensitive)
                == 0)
                return value;
        return std::nullopt;
    };
}

SourceSpec spec(const std::string& text)
{
    return *parseSource(text);
}

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

} // namespace

class TestHubApi : public QObject {
    Q_OBJECT
private slots:
    void fileUrls();
    void treeUrls();
    void metadataOfARedirectedFile();
    void metadataOfAFileServedDirectly();
    void refusals_data();
    void refusals();
    void tree();
    void treeThatIsNotOne();
    void nextPage();
};

void TestHubApi::fileUrls()
{
    HubSettings hub;
    hub.endpoint = "https://huggingface.co";
    QCOMPARE(hubFileUrl(hub, spec("hf://org/repo/onnx/model q4.onnx"), "main"),
        std::string("https://huggingface.co/org/repo/resolve/main/onnx/model%20q4.onnx"));
    QCOMPARE(hubFileUrl(hub, spec("hf://datasets/org/d@refs%2Fpr%2F1/x.onnx"), "refs/pr/1"),
        std::string("https://huggingface.co/datasets/org/d/resolve/refs%2Fpr%2F1/x.onnx"));
    hub.endpoint = "http://127.0.0.1:9";
    QCOMPARE(hubFileUrl(hub, spec("hf://org/repo/m.onnx"), kCommit),
        "http://127.0.0.1:9/org/repo/resolve/" + kCommit + "/m.onnx");
}

void TestHubApi::treeUrls()
{
    HubSettings hub;
    hub.endpoint = "https://huggingface.co";
    QCOMPARE(hubTreeUrl(hub, spec("hf://org/repo/onnx/"), kCommit),
        "https://huggingface.co/api/models/org/repo/tree/" + kCommit + "/onnx?recursive=true");
    QCOMPARE(hubTreeUrl(hub, spec("hf://spaces/org/app"), "main"),
        std::string("https://huggingface.co/api/spaces/org/app/tree/main?recursive=true"));
}

void TestHubApi::metadataOfARedirectedFile()
{
    auto m = hubFileMetadata(302,
        headers({{"x-repo-commit", kCommit}, {"X-Linked-Etag", "\"sha256abc\""},
            {"X-Linked-Size", "1234567890"}, {"Location", "https://cdn.test/blob?sig=1"},
            {"Content-Length", "1110"}}),
        "hf://org/repo/m.onnx", false);
    QVERIFY2(m, m ? "" : m.error().message.c_str());
    QCOMPARE(m->commit, kCommit);
    QCOMPARE(m->etag, std::string("sha256abc"));
    QCOMPARE(m->size.value_or(0), uint64_t(1234567890)); // not the redirect's own length
    QCOMPARE(m->location, std::string("https://cdn.test/blob?sig=1"));
}

void TestHubApi::metadataOfAFileServedDirectly()
{
    auto m = hubFileMetadata(200,
        headers({{"X-Repo-Commit", kCommit}, {"ETag", "W/\"git-oid\""}, {"Content-Length", "42"}}),
        "hf://org/repo/config.json", true);
    QVERIFY(m);
    QCOMPARE(m->etag, std::string("git-oid"));
    QCOMPARE(m->size.value_or(0), uint64_t(42));
    QVERIFY(m->location.empty());
    auto noCommit = hubFileMetadata(
        200, headers({{"ETag", "\"x\""}, {"Content-Length", "1"}}), "hf://org/repo/m.onnx", false);
    QVERIFY(!noCommit);
    QVERIFY(noCommit.error().message.find("HF_ENDPOINT") != std::string::npos);
    // A redirect's Content-Length is the redirect's, not the file's.
    auto noSize = hubFileMetadata(302,
        headers({{"X-Repo-Commit", kCommit}, {"ETag", "\"x\""}, {"Content-Length", "1110"}}),
        "hf://org/repo/m.onnx", false);
    QVERIFY(!noSize);
}

void TestHubApi::refusals_data()
{
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::addColumn<bool>("token");
    QTest::addColumn<QString>("says");
    QTest::addRow("repository") << 404 << "RepoNotFound" << true << "no such repository";
    QTest::addRow("revision") << 404 << "RevisionNotFound" << true << "no such revision";
    QTest::addRow("file") << 404 << "EntryNotFound" << true << "no such file";
    QTest::addRow("gated") << 403 << "GatedRepo" << true << "gated";
    QTest::addRow("private, no token") << 401 << "" << false << "set HF_TOKEN";
    QTest::addRow("other") << 403 << "" << true << "answered 403";
}

void TestHubApi::refusals()
{
    QFETCH(int, status);
    QFETCH(QString, code);
    QFETCH(bool, token);
    QFETCH(QString, says);
    std::map<std::string, std::string> h{{"X-Repo-Commit", kCommit}};
    if (!code.isEmpty())
        h["X-Error-Code"] = code.toStdString();
    auto m = hubFileMetadata(status, headers(h), "hf://org/repo/m.onnx", token);
    QVERIFY(!m);
    QVERIFY(m.error().is(ErrorKind::NotFound));
    QVERIFY2(m.error().message.starts_with("hf://org/repo/m.onnx: "), m.error().message.c_str());
    QVERIFY2(
        m.error().message.find(says.toStdString()) != std::string::npos, m.error().message.c_str());
}

void TestHubApi::tree()
{
    auto entries = parseHubTree(R"([
        {"type": "directory", "oid": "d1", "path": "onnx"},
        {"type": "file", "oid": "a1", "size": 1300, "path": "onnx/model.onnx"},
        {"type": "file", "oid": "b2", "size": 2147483648, "path": "onnx/model.onnx_data",
         "lfs": {"oid": "f00d", "size": 2147483648, "pointerSize": 135}}
    ])");
    QVERIFY(entries);
    QCOMPARE(entries->size(), size_t(3));
    QVERIFY((*entries)[0].directory);
    QCOMPARE((*entries)[1].path, std::string("onnx/model.onnx"));
    QCOMPARE((*entries)[1].size, uint64_t(1300));
    QCOMPARE((*entries)[2].size, uint64_t(2147483648));
    QCOMPARE((*entries)[2].lfsSha256, std::string("f00d"));
    QVERIFY((*entries)[1].lfsSha256.empty());
}

void TestHubApi::treeThatIsNotOne()
{
    QVERIFY(!parseHubTree("{\"error\": \"Repository not found\"}"));
    QVERIFY(!parseHubTree("[{\"type\": \"file\"}]"));
    QVERIFY(!parseHubTree("[1, 2"));
    QVERIFY(parseHubTree("[]"));
}

void TestHubApi::nextPage()
{
    QCOMPARE(nextPageLink("<https://h/api/x?cursor=abc>; rel=\"next\"").value_or(""),
        std::string("https://h/api/x?cursor=abc"));
    QCOMPARE(
        nextPageLink("<https://h/p1>; rel=\"prev\", <https://h/p3>; rel=\"next\"").value_or(""),
        std::string("https://h/p3"));
    QVERIFY(!nextPageLink("<https://h/p1>; rel=\"prev\""));
    QVERIFY(!nextPageLink(""));
    QVERIFY(!nextPageLink("<broken"));
}

QTEST_APPLESS_MAIN(TestHubApi)
#include "tst_hub_api.moc"
