// hubSettings, cachedCommit and cachedFile (issue 38): the Hub's environment read as
// huggingface_hub reads it, and its cache found and read, never left through a symlink or a
// revision spelled as a path.
#include "core/io/hub_cache.h"

#include "tests/support/map_environment.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <map>

using namespace repack;
using fixtures::mapEnvironment;
namespace fs = std::filesystem;

namespace {

void writeFile(const fs::path& path, const std::string& text)
{
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kOther = "fedcba9876543210fedcba9876543210fedcba98";

// A cache as huggingface_hub leaves it: refs/main, a snapshot whose file links into blobs/.
fs::path makeCache(const fs::path& root)
{
    const fs::path repo = root / "models--org--repo";
    writeFile(repo / "refs" / "main", kCommit + "\n");
    writeFile(repo / "refs" / "refs" / "pr" / "1", kOther);
    writeFile(repo / "blobs" / "abc123", "weights");
    fs::create_directories(repo / "snapshots" / kCommit / "onnx");
    fs::create_symlink(
        "../../../blobs/abc123", repo / "snapshots" / kCommit / "onnx" / "model.onnx");
    return root;
}

SourceSpec hub(const std::string& text)
{
    auto spec = parseSource(text);
    if (!spec)
        qFatal("%s", spec.error().message.c_str());
    return *spec;
}

} // namespace

class TestHubCache : public QObject {
    Q_OBJECT
private slots:
    void defaults();
    void variablesInHuggingfaceHubsOrder();
    void tokenFromItsFile();
    void commits();
    void files();
    void aSymlinkOutOfTheRepositoryIsNotRead();
};

void TestHubCache::defaults()
{
    const HubSettings s = hubSettings(mapEnvironment({{"HOME", "/home/u"}}));
    QCOMPARE(s.endpoint, std::string("https://huggingface.co"));
    QCOMPARE(s.cache, fs::path("/home/u/.cache/huggingface/hub"));
    QVERIFY(!s.token);
    QVERIFY(!s.offline);
}

void TestHubCache::variablesInHuggingfaceHubsOrder()
{
    QCOMPARE(hubSettings(mapEnvironment({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/xdg"}})).cache,
        fs::path("/xdg/huggingface/hub"));
    QCOMPARE(hubSettings(mapEnvironment({{"HOME", "/h"}, {"HF_HOME", "~/hf"}})).cache,
        fs::path("/h/hf/hub"));
    QCOMPARE(hubSettings(mapEnvironment({{"HF_HOME", "/hf"}, {"HUGGINGFACE_HUB_CACHE", "/legacy"}}))
                 .cache,
        fs::path("/legacy"));
    QCOMPARE(hubSettings(
                 mapEnvironment({{"HF_HUB_CACHE", "/new"}, {"HUGGINGFACE_HUB_CACHE", "/legacy"}}))
                 .cache,
        fs::path("/new"));
    QCOMPARE(hubSettings(mapEnvironment({{"HF_ENDPOINT", "http://127.0.0.1:8080//"}})).endpoint,
        std::string("http://127.0.0.1:8080"));
    const HubSettings both = hubSettings(
        mapEnvironment({{"HF_TOKEN", " hf_new "}, {"HUGGING_FACE_HUB_TOKEN", "hf_old"}}));
    QCOMPARE(both.token.value_or(""), std::string("hf_new"));
    const HubSettings emptyFirst
        = hubSettings(mapEnvironment({{"HF_TOKEN", ""}, {"HUGGING_FACE_HUB_TOKEN", "hf_old"}}));
    QCOMPARE(emptyFirst.token.value_or(""), std::string("hf_old"));
    for (const char* on : {"1", "true", "YES", "on"})
        QVERIFY(hubSettings(mapEnvironment({{"HF_HUB_OFFLINE", on}})).offline);
    for (const char* off : {"0", "false", ""})
        QVERIFY(!hubSettings(mapEnvironment({{"HF_HUB_OFFLINE", off}})).offline);
}

void TestHubCache::tokenFromItsFile()
{
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeFile(root / "hf" / "token", "  hf_from_file\n");
    QCOMPARE(hubSettings(mapEnvironment({{"HF_HOME", (root / "hf").string()}})).token.value_or(""),
        std::string("hf_from_file"));
    writeFile(root / "elsewhere", "hf_path\n");
    QCOMPARE(hubSettings(mapEnvironment({{"HF_HOME", (root / "hf").string()},
                             {"HF_TOKEN_PATH", (root / "elsewhere").string()}}))
                 .token.value_or(""),
        std::string("hf_path"));
    writeFile(root / "blank", "\n");
    QVERIFY(!hubSettings(mapEnvironment({{"HF_TOKEN_PATH", (root / "blank").string()}})).token);
}

void TestHubCache::commits()
{
    QTemporaryDir dir;
    const fs::path cache = makeCache(dir.path().toStdString());
    QCOMPARE(cachedCommit(cache, hub("hf://org/repo/onnx/model.onnx")).value_or(""), kCommit);
    QCOMPARE(cachedCommit(cache, hub("hf://org/repo@refs%2Fpr%2F1/m.onnx")).value_or(""), kOther);
    QCOMPARE(cachedCommit(cache, hub("hf://org/repo@" + kOther + "/m.onnx")).value_or(""), kOther);
    QVERIFY(!cachedCommit(cache, hub("hf://org/repo@v9/m.onnx"))); // never downloaded
    QVERIFY(!cachedCommit(cache, hub("hf://org/other/m.onnx")));
    // A revision spelled as a path does not leave refs/.
    writeFile(cache / "models--org--repo" / "escape", kCommit);
    QVERIFY(!cachedCommit(cache, hub("hf://org/repo@..%2Fescape/m.onnx")));
    // refs/main holding something other than a commit is not one.
    writeFile(cache / "models--org--repo" / "refs" / "dev", "not a commit");
    QVERIFY(!cachedCommit(cache, hub("hf://org/repo@dev/m.onnx")));
    QVERIFY(isCommit(kCommit));
    QVERIFY(!isCommit(kCommit.substr(1)));
    QVERIFY(!isCommit("0123456789ABCDEF0123456789ABCDEF01234567"));
}

void TestHubCache::files()
{
    QTemporaryDir dir;
    const fs::path cache = makeCache(dir.path().toStdString());
    auto found = cachedFile(cache, hub("hf://org/repo/onnx/model.onnx"), kCommit);
    QVERIFY(found);
    std::ifstream in(*found);
    std::string text;
    std::getline(in, text);
    QCOMPARE(text, std::string("weights"));
    QVERIFY(!cachedFile(cache, hub("hf://org/repo/onnx/other.onnx"), kCommit));
    QVERIFY(!cachedFile(cache, hub("hf://org/repo/onnx/model.onnx"), kOther));
    QVERIFY(!cachedFile(cache, hub("hf://org/repo/onnx/"), kCommit)); // a folder
    QVERIFY(!cachedFile(cache, hub("hf://datasets/org/repo/onnx/model.onnx"), kCommit));
    writeFile(cache / "datasets--org--repo" / "snapshots" / kCommit / "d.onnx", "data");
    QVERIFY(cachedFile(cache, hub("hf://datasets/org/repo/d.onnx"), kCommit));
}

void TestHubCache::aSymlinkOutOfTheRepositoryIsNotRead()
{
    QTemporaryDir dir;
    const fs::path cache = makeCache(dir.path().toStdString());
    writeFile(fs::path(dir.path().toStdString()) / "secret.txt", "not the cache's");
    const fs::path snapshot = cache / "models--org--repo" / "snapshots" / kCommit;
    fs::create_symlink("../../../secret.txt", snapshot / "leak.onnx");
    QVERIFY(fs::exists(snapshot / "leak.onnx"));
    QVERIFY(!cachedFile(cache, hub("hf://org/repo/leak.onnx"), kCommit));
}

QTEST_APPLESS_MAIN(TestHubCache)
#include "tst_hub_cache.moc"
