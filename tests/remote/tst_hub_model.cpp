// A model on the Hugging Face Hub (issue 38), against a scripted Hub on 127.0.0.1 (a
// FaultServer): hf://ORG/REPO[@REV]/PATH is resolved once to a commit and every later request
// names that commit; a file the Hub redirects to its CDN (another origin, here "localhost") is
// read there without the token; a relative redirect (a renamed repository) keeps it; the Hub's
// refusals (gated, no such repository, revision or file) are errors naming the hf:// file; a file
// the HF cache holds for the commit is read from disk and never asked for. The CLI's inspect and
// verify take the hf:// name and report what they report of the same files on disk; its repack
// writes what a repack of them writes.
#include "core/io/hub_cache.h"
#include "core/io/source_spec.h"
#include "core/model/model.h"
#include "core/remote/hub_client.h"
#include "core/remote/hub_folder.h"
#include "core/save/folder_save.h"
#include "core/save/save.h"
#include "tests/support/cli_run.h"
#include "tests/support/fault_server.h"
#include "tests/support/hub_fixture.h"
#include "tests/support/model_builder.h"
#include "tests/support/model_checks.h"
#include "tests/support/python_reader.h"
#include "tests/support/result_checks.h"
#include "tests/support/tensor_builder.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace repack;
namespace fs = std::filesystem;

namespace {

// The scripted Hub and its repositories (tests/support/hub_fixture.h).
using fixtures::dataFilesOf;
using fixtures::FaultRequest;
using fixtures::FaultServer;
using fixtures::HubFixture;
using fixtures::optimumFiles;
using fixtures::writeLocally;
const std::string& kCommit = fixtures::kHubCommit;
const std::string& kToken = fixtures::kHubToken;

// An Optimum export whose decoders hold the same weights, each in its own data file (as
// decoder_model and decoder_with_past_model do): a repack with --shared-data stores them once.
// The decoders' data files span two blocks of the block cache (256 KiB), so a save reads each
// of them in more than one request.
std::map<std::string, std::string> sharingOptimumFiles()
{
    std::map<std::string, std::string> files{{"README.md", "# a model\n"}};
    for (const auto& [name, a, b, seed] :
        {std::tuple{"encoder_model", 3000, 700, 1}, std::tuple{"decoder_model", 70000, 900, 3},
            std::tuple{"decoder_with_past_model", 70000, 900, 3}}) {
        onnx::ModelProto model = fixtures::emptyModel();
        onnx::GraphProto& graph = *model.mutable_graph();
        *graph.add_initializer() = fixtures::rawTensor("small", onnx::TensorProto::FLOAT, {8});
        const std::string data = std::string(name) + ".onnx_data";
        files["onnx/" + data] = fixtures::addExternalPair(graph, data, a, b, uint8_t(seed));
        files["onnx/" + std::string(name) + ".onnx"] = model.SerializeAsString();
    }
    return files;
}

// One graph whose data file (in LFS) is read by two requests: its second tensor starts in the
// block (256 KiB) its first ends in, and ends in the next.
std::map<std::string, std::string> twoRequestFiles()
{
    onnx::ModelProto model = fixtures::emptyModel();
    const std::string data
        = fixtures::addExternalPair(*model.mutable_graph(), "w.onnx_data", 70000, 70000, 5);
    return {{"onnx/model.onnx", model.SerializeAsString()}, {"onnx/w.onnx_data", data}};
}

Result<std::unique_ptr<Model>> openHub(
    const std::string& name, const HubSettings& settings, BlockCache& cache)
{
    auto spec = parseSource(name);
    if (!spec)
        return spec.error();
    return openHubModel(*spec, settings, &cache);
}

// Why `model` is not a model without errors: its error or its first problem; "" when it is.
std::string whyNot(const Result<std::unique_ptr<Model>>& model)
{
    return model ? fixtures::firstError(**model) : model.error().message;
}

// The errors of reading each of `model`'s tensors, in index order (none when all are read).
std::vector<Error> readErrors(Model& model)
{
    std::vector<Error> errors;
    for (size_t i = 0; i < model.tensors().size(); ++i)
        if (auto bytes = model.read(i); !bytes)
            errors.push_back(bytes.error());
    return errors;
}

// A Hub, an HF cache folder of its own (empty unless planted) and a block cache.
struct HubCase {
    HubFixture hub;
    QTemporaryDir dir;
    BlockCache cache;
    fs::path cacheDir() const { return fs::path(dir.path().toStdString()) / "cache"; }
    Result<std::unique_ptr<Model>> open(const std::string& name, bool withToken = true)
    {
        return openHub(name, hub.settings(cacheDir(), withToken), cache);
    }
};

// twoRequestFiles()'s model on `c`'s Hub, opened, each CDN signature good for `uses` answers.
Result<std::unique_ptr<Model>> openExpiring(HubCase& c, int uses)
{
    c.hub.files = twoRequestFiles();
    c.hub.lfs = {"onnx/w.onnx_data"};
    c.hub.signatureUses = uses;
    return c.open("hf://org/repo/onnx/model.onnx");
}

} // namespace

class TestHubModel : public QObject {
    Q_OBJECT
private slots:
    void resolvesOnceThenAsksTheCommit();
    void theTokenNeverReachesTheCdn();
    void aRenamedRepositoryKeepsTheToken();
    void refusalsNameTheHubFile_data();
    void refusalsNameTheHubFile();
    void anExpiredCdnAddressIsAskedOfTheHubAgain();
    void aFileChangedWhileItsAddressWasGivenAgainIsChanged();
    void anAddressRefusedAgainAtOnceIsAnError();
    void theTokenGoesOnlyToTheHubWhenAnAddressIsGivenAgain();
    void theTokenNeverLeavesTheHubsOrigin_data();
    void theTokenNeverLeavesTheHubsOrigin();
    void noCommandSendsTheTokenWhereAHubRedirects();
    void anAddressGivenAgainThatCannotBeStatedIsAnError();
    void aCachedFileIsReadFromDisk();
    void offlineReadsTheCacheOnly();
    void theCliInspectsAndVerifiesAHubModel();
    void theCliRepacksAHubModelIntoALocalFolder();
    void aRepackNeverWritesIntoTheHubCache();
    void aFolderBesideTheHubCacheIsNotInsideIt();
    void theCliListsAHubFolder();
    void aHubFolderIsReportedAsTheLocalFolder_data();
    void aHubFolderIsReportedAsTheLocalFolder();
    void aModelOfAHubFolderThatDoesNotParseIsNamed();
    void aHubFolderComparesTheWeightsItsGraphsShare();
    void aBranchThatMovedIsListedAgainAtTheCommit();
    void aListingNeverLeavesTheHub();
    void aHubFolderRepacksAsItsDownloadedCopy_data();
    void aHubFolderRepacksAsItsDownloadedCopy();
    void aHubFolderIsNeverSavedInPlace();
    void aHubFolderIsNeverSavedIntoTheHubCache();
    void aFileChangedDuringTheSaveLeavesTheOutputAsItWas();
    void aCancelledFolderSaveLeavesNothing();
    void aHubFileReplacedAfterItWasReadFailsTheSave_data();
    void aHubFileReplacedAfterItWasReadFailsTheSave();
    void aHubFolderFileReplacedAfterItWasReadFailsTheFolderSave_data();
    void aHubFolderFileReplacedAfterItWasReadFailsTheFolderSave();
};

void TestHubModel::resolvesOnceThenAsksTheCommit()
{
    HubCase c;
    auto model = c.open("hf://org/repo/m/model.onnx");
    QVERIFY2(model && !(*model)->hasErrors(), whyNot(model).c_str());
    QCOMPARE((*model)->origin(), "hf://org/repo@" + kCommit + "/m/model.onnx");
    auto local = Model::load(writeLocally(c.hub.files, c.dir.path().toStdString() + "/local"));
    QVERIFY(local);
    fixtures::compareTensorBytes(**model, **local);
    if (QTest::currentTestFailed())
        return;
    const auto requests = c.hub.server.requests();
    QVERIFY(requests.size() > 2);
    QCOMPARE(requests.front().method, std::string("HEAD"));
    QCOMPARE(requests.front().target, std::string("/org/repo/resolve/main/m/model.onnx"));
    for (size_t i = 1; i < requests.size(); ++i) {
        const auto& r = requests[i];
        QVERIFY2(r.target.find("/resolve/main/") == std::string::npos, r.target.c_str());
        QVERIFY2(HubFixture::atCdn(r) || r.target.starts_with("/org/repo/resolve/" + kCommit + "/"),
            r.target.c_str());
    }
}

void TestHubModel::theTokenNeverReachesTheCdn()
{
    HubCase c;
    auto model = c.open("hf://org/repo/m/model.onnx");
    QVERIFY2(model && !(*model)->hasErrors(), whyNot(model).c_str());
    for (size_t i = 0; i < (*model)->tensors().size(); ++i)
        QVERIFY((*model)->read(i));
    int atCdn = 0;
    for (const auto& r : c.hub.server.requests()) {
        const std::string auth = r.header("authorization");
        if (HubFixture::atCdn(r)) {
            ++atCdn;
            QVERIFY2(auth.empty(), r.target.c_str());
        } else {
            QCOMPARE(auth, "Bearer " + kToken);
        }
    }
    QVERIFY(atCdn >= 2); // the HEAD of w.bin and a range of it
}

void TestHubModel::aRenamedRepositoryKeepsTheToken()
{
    HubCase c;
    auto model = c.open("hf://org/old/m/model.onnx");
    QVERIFY2(model && !(*model)->hasErrors(), whyNot(model).c_str());
    const auto requests = c.hub.server.requests();
    QVERIFY(requests.size() > 2);
    QCOMPARE(requests[0].target, std::string("/org/old/resolve/main/m/model.onnx"));
    QCOMPARE(requests[1].target, std::string("/org/repo/resolve/main/m/model.onnx"));
    QCOMPARE(requests[1].header("authorization"), "Bearer " + kToken);
}

void TestHubModel::refusalsNameTheHubFile_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("gated");
    QTest::addColumn<bool>("withToken");
    QTest::addColumn<QString>("why");
    QTest::addRow("gated") << "hf://org/repo/m/model.onnx" << true << false << "gated";
    QTest::addRow("gated, with a token") << "hf://org/repo/m/model.onnx" << true << true << "gated";
    QTest::addRow("no such repository")
        << "hf://org/none/m/model.onnx" << false << true << "no such repository";
    QTest::addRow("no such revision")
        << "hf://org/repo@v9/m/model.onnx" << false << true << "no such revision";
    QTest::addRow("no such file") << "hf://org/repo/m/other.onnx" << false << true
                                  << "no such file";
}

void TestHubModel::refusalsNameTheHubFile()
{
    QFETCH(QString, name);
    QFETCH(bool, gated);
    QFETCH(bool, withToken);
    QFETCH(QString, why);
    HubCase c;
    c.hub.gated = gated;
    auto model = c.open(name.toStdString(), withToken);
    QVERIFY(!model);
    const std::string& message = model.error().message;
    QVERIFY2(model.error().is(ErrorKind::NotFound), message.c_str());
    QVERIFY2(message.starts_with(name.toStdString() + ": "), message.c_str());
    QVERIFY2(message.find(why.toStdString()) != std::string::npos, message.c_str());
    QVERIFY2(message.find(kToken) == std::string::npos, message.c_str());
    QCOMPARE(message.find("HF_TOKEN") != std::string::npos, !withToken);
}

// The CLI's environment for `hub`: its endpoint, the token, an HF cache in `dir` (not made).
fixtures::CliOptions cliOptions(const HubFixture& hub, const QTemporaryDir& dir)
{
    fixtures::CliOptions options;
    options.env = {{"HF_ENDPOINT", QString::fromStdString(hub.endpoint())},
        {"HF_TOKEN", QString::fromStdString(kToken)}, {"HF_HUB_CACHE", dir.path() + "/cache"},
        {"NO_PROXY", "127.0.0.1,localhost"}};
    return options;
}

// Plants the files of the repository in an HF cache as huggingface_hub leaves them:
// snapshots/COMMIT/PATH symlinks into blobs/, and refs/main.
void plantCache(const fs::path& cache, const std::map<std::string, std::string>& files)
{
    const fs::path repo = cache / "models--org--repo";
    fs::create_directories(repo / "refs");
    std::ofstream(repo / "refs" / "main") << kCommit;
    int n = 0;
    for (const auto& [path, bytes] : files) {
        const std::string blob = "blob" + std::to_string(n++);
        fs::create_directories(repo / "blobs");
        std::ofstream(repo / "blobs" / blob, std::ios::binary) << bytes;
        const fs::path link = repo / "snapshots" / kCommit / path;
        fs::create_directories(link.parent_path());
        fs::create_symlink(fs::relative(repo / "blobs" / blob, link.parent_path()), link);
    }
}

// A CDN address is signed for a while: here each signature is good for two answers (the stat
// and one read), so the data file's second read is refused (403, "expired"). The file's address is
// asked of the Hub again, at the commit, and every tensor reads as the file's bytes.
void TestHubModel::anExpiredCdnAddressIsAskedOfTheHubAgain()
{
    HubCase c;
    auto remote = openExpiring(c, 2); // the stat and one read
    QVERIFY2(remote && !(*remote)->hasErrors(), whyNot(remote).c_str());
    const fs::path twin = c.dir.path().toStdString() + "/local";
    writeLocally(c.hub.files, twin);
    auto local = Model::load(twin / "onnx" / "model.onnx");
    QVERIFY(local);
    fixtures::compareTensorBytes(**remote, **local);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(c.hub.resolves["onnx/w.onnx_data"], 2); // opened, then once again
    for (const auto& r : c.hub.server.requests()) {
        QVERIFY2(HubFixture::atCdn(r) || r.target.starts_with("/org/repo/resolve/" + kCommit + "/")
                || r.target.find("/resolve/main/") != std::string::npos,
            r.target.c_str());
        if (HubFixture::atCdn(r))
            QCOMPARE(r.header("authorization"), std::string());
    }
}

// The address given again serves another version of the file (another ETag): Changed, and no
// byte of the new version is read.
void TestHubModel::aFileChangedWhileItsAddressWasGivenAgainIsChanged()
{
    HubCase c;
    c.hub.resignedIsNewVersion = true;
    auto remote = openExpiring(c, 2);
    QVERIFY2(remote && !(*remote)->hasErrors(), whyNot(remote).c_str());
    const std::vector<Error> errors = readErrors(**remote);
    QVERIFY(!errors.empty());
    const Error* failed = &errors.front();
    QVERIFY(!readErrors(**remote).empty()); // read again: the Hub is not asked again
    QVERIFY2(failed->is(ErrorKind::Changed), failed->message.c_str());
    QVERIFY2(failed->message.find("changed on the server") != std::string::npos,
        failed->message.c_str());
    QVERIFY2(failed->message.find("cdn-onnx/w.onnx_data-v2") != std::string::npos,
        failed->message.c_str());
    QCOMPARE(c.hub.resolves["onnx/w.onnx_data"], 2);
    for (const auto& r : c.hub.server.requests()) // the new version is only stated (HEAD)
        QVERIFY2(!HubFixture::atCdn(r) || r.method == "HEAD"
                || r.target.ends_with("?Signature="
                    + c.hub.firstSignature[r.target.substr(5, r.target.find('?') - 5)]),
            r.target.c_str());
}

// A signature refused at once (each good for one answer: the stat uses it) is no expiry: the
// read is an error saying 403 and naming the hf:// file, and the next read asks the Hub no more.
void TestHubModel::anAddressRefusedAgainAtOnceIsAnError()
{
    HubCase c;
    auto remote = openExpiring(c, 1);
    QVERIFY2(remote && !(*remote)->hasErrors(), whyNot(remote).c_str());
    const std::vector<Error> failures = readErrors(**remote);
    QVERIFY(!failures.empty());
    for (const Error& e : failures) {
        QVERIFY2(e.is(ErrorKind::Io), e.message.c_str());
        QVERIFY2(e.message.find("403") != std::string::npos, e.message.c_str());
        // Named as the Hub's file, never by its CDN address.
        QVERIFY2(
            e.message.find("hf://org/repo@" + kCommit + "/onnx/w.onnx_data") != std::string::npos,
            e.message.c_str());
        QVERIFY2(e.message.find("/cdn/") == std::string::npos, e.message.c_str());
    }
    QCOMPARE(c.hub.resolves["onnx/w.onnx_data"], 2); // asked again once, no more
}

// The Hub first sends the file from its own host (with the token), then, asked again, from
// another: the source would carry the token there, so the read is an error and that host is
// never asked.
// The first address is on the Hub's own host, the one given again on the CDN's: the reads go on
// there, the token only ever sent to the Hub's origin (the transport decides, per request).
void TestHubModel::theTokenGoesOnlyToTheHubWhenAnAddressIsGivenAgain()
{
    HubCase c;
    c.hub.firstSignedAtHub = true;
    auto remote = openExpiring(c, 2);
    QVERIFY2(remote && !(*remote)->hasErrors(), whyNot(remote).c_str());
    const std::vector<Error> errors = readErrors(**remote);
    QVERIFY2(errors.empty(), errors.empty() ? "" : errors.front().message.c_str());
    QCOMPARE(c.hub.resolves["onnx/w.onnx_data"], 2);
    bool readAtHub = false;
    bool readAtCdn = false;
    for (const auto& r : c.hub.server.requests()) {
        const bool withToken = r.header("authorization") == "Bearer " + kToken;
        QVERIFY2(!HubFixture::atCdn(r) || !withToken, r.target.c_str());
        readAtHub |= r.target.starts_with("/cdn/") && !HubFixture::atCdn(r) && withToken;
        readAtCdn |= HubFixture::atCdn(r);
    }
    QVERIFY(readAtHub); // the first address was read with the token
    QVERIFY(readAtCdn);
}

namespace {

// A server that answers 404 to anything and keeps what it was asked: where a leaked token lands.
struct Catcher {
    explicit Catcher(const std::string& host)
        : server([](int socket, const FaultRequest&,
                     int) { FaultServer::respond(socket, "404 Not Found", {}, ""); },
            host)
    {
    }
    FaultServer server;
    std::string at() const { return server.host() + ":" + std::to_string(server.port()); }
};

// `location` with {OTHER} (another host's address and port), {PORT} (another port of the Hub's
// host) and {HUB} (the Hub's port) spelled out.
std::string spelledOut(
    std::string location, const Catcher& otherHost, const Catcher& otherPort, const HubFixture& hub)
{
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"{OTHER}", otherHost.at()},
             {"{OTHERPORT}", std::to_string(otherHost.server.port())},
             {"{PORT}", std::to_string(otherPort.server.port())},
             {"{HUB}", std::to_string(hub.server.port())}})
        for (size_t at; (at = location.find(key)) != std::string::npos;)
            location.replace(at, key.size(), value);
    return location;
}

// The requests that carried the token to anywhere but the Hub's resolve and tree calls, one a
// line ("" when none).
std::string strayTokens(const HubFixture& hub, const Catcher& a, const Catcher& b)
{
    std::string stray;
    for (const Catcher* catcher : {&a, &b})
        for (const auto& r : catcher->server.requests())
            if (!r.header("authorization").empty())
                stray += catcher->at() + r.target + "\n";
    for (const auto& r : hub.server.requests())
        if (!r.target.starts_with("/org/") && !r.target.starts_with("/api/")
            && !r.header("authorization").empty())
            stray += "the Hub's host" + r.target + "\n";
    return stray;
}

} // namespace

void TestHubModel::theTokenNeverLeavesTheHubsOrigin_data()
{
    // Each a Location a hostile Hub may answer a resolve with; `reaches`: 1 when the request
    // must arrive at a catcher (the row really sends somewhere), 0 when it must not be sent at
    // all (not an http(s) URL libcurl can parse), -1 either way (name resolution decides).
    QTest::addColumn<QString>("location");
    QTest::addColumn<int>("reaches");
    QTest::addRow("one slash") << "http:/{OTHER}/steal" << 1;
    QTest::addRow("no slash") << "http:{OTHER}/steal" << 0;
    QTest::addRow("scheme-relative") << "//{OTHER}/steal" << 1;
    QTest::addRow("upper-case scheme") << "HTTP://{OTHER}/steal" << 1;
    QTest::addRow("the Hub's host, another port") << "http://127.0.0.1:{PORT}/steal" << 1;
    QTest::addRow("backslashes") << "http:\\\\{OTHER}\\steal" << 0;
    QTest::addRow("userinfo naming the Hub") << "http://127.0.0.1:{HUB}@{OTHER}/steal" << 1;
    QTest::addRow("trailing dot") << "http://localhost.:{PORT}/steal" << -1;
    QTest::addRow("percent-encoded host") << "http://%31%32%37.0.0.2:{OTHERPORT}/steal" << 1;
    QTest::addRow("decimal address") << "http://2130706434:{OTHERPORT}/steal" << 1;
    QTest::addRow("IPv6 literal") << "http://[::ffff:127.0.0.2]:{OTHERPORT}/steal" << -1;
    QTest::addRow("IDN host") << "http://b\u00fccher.localhost:{PORT}/steal" << -1;
    QTest::addRow("file scheme") << "file:///etc/passwd" << 0;
}

// The token is the transport's to attach, by libcurl's parse of the URL each request connects
// to: however a resolve's Location is spelled, no request elsewhere than the Hub carries it.
void TestHubModel::theTokenNeverLeavesTheHubsOrigin()
{
    QFETCH(QString, location);
    QFETCH(int, reaches);
    const Catcher otherHost("127.0.0.2");
    const Catcher otherPort("127.0.0.1");
    HubCase c;
    c.hub.lfsLocation = spelledOut(location.toStdString(), otherHost, otherPort, c.hub);
    auto model = c.open("hf://org/repo/m/model.onnx");
    if (model)
        readErrors(**model);
    const auto stray = strayTokens(c.hub, otherHost, otherPort);
    QVERIFY2(stray.empty(), stray.c_str());
    const size_t caught = otherHost.server.requests().size() + otherPort.server.requests().size();
    if (reaches == 1)
        QVERIFY2(caught > 0, "the row sent nothing to the other server");
    if (reaches == 0) {
        // The Location cannot be followed: the data file is an error naming the Hub file.
        QCOMPARE(caught, size_t(0));
        const std::string why = whyNot(model);
        QVERIFY2(
            why.find("hf://org/repo@" + kCommit + "/m/w.bin: ") != std::string::npos, why.c_str());
    }
}

// The same for every command that reads the Hub: inspect and repack of a model and of a folder.
void TestHubModel::noCommandSendsTheTokenWhereAHubRedirects()
{
    const Catcher otherHost("127.0.0.2");
    const Catcher otherPort("127.0.0.1");
    HubFixture hub;
    hub.files = optimumFiles();
    hub.files["m/model.onnx"] = fixtures::hubRepositoryFiles().at("m/model.onnx");
    hub.files["m/w.bin"] = fixtures::hubRepositoryFiles().at("m/w.bin");
    hub.lfs = fixtures::dataFilesOf(hub.files);
    hub.lfs.insert("m/w.bin");
    hub.lfsLocation = spelledOut("http:/{OTHER}/steal", otherHost, otherPort, hub);
    QTemporaryDir dir;
    const fixtures::CliOptions options = cliOptions(hub, dir);
    for (const QStringList& args : {QStringList{"inspect", "hf://org/repo/m/model.onnx"},
             QStringList{"repack", "hf://org/repo/m/model.onnx", "-o", dir.filePath("a/m.onnx")},
             QStringList{"inspect", "hf://org/repo/onnx"},
             QStringList{"repack", "hf://org/repo/onnx", "-o", dir.filePath("b"), "--shared-data",
                 "w.bin"}}) {
        const auto run = fixtures::runCli(args, options);
        // A repack needs the weights, which are nowhere (inspect of a folder sizes its data
        // files from the listing and may pass).
        if (args.front() == "repack")
            QVERIFY2(run.exitCode != 0, qPrintable(args.join(' ')));
        QVERIFY(!run.out.contains(kToken.c_str()) && !run.err.contains(kToken.c_str()));
    }
    QVERIFY(!otherHost.server.requests().empty());
    const auto stray = strayTokens(hub, otherHost, otherPort);
    QVERIFY2(stray.empty(), stray.c_str());
    QVERIFY(!fs::exists(dir.filePath("a/m.onnx").toStdString()));
}

// The address given again is refused at once, even its stat: an Io error naming the hf:// file
// and saying where it failed; read again, the Hub is not asked again.
void TestHubModel::anAddressGivenAgainThatCannotBeStatedIsAnError()
{
    HubCase c;
    c.hub.resignedRefused = true;
    auto remote = openExpiring(c, 2);
    QVERIFY2(remote && !(*remote)->hasErrors(), whyNot(remote).c_str());
    const std::vector<Error> errors = readErrors(**remote);
    QCOMPARE(errors.size(), size_t(1)); // the first tensor is read at the first address
    QVERIFY2(errors[0].is(ErrorKind::Io), errors[0].message.c_str());
    QVERIFY2(errors[0].message.starts_with(
                 "graph/ext_b: hf://org/repo@" + kCommit + "/onnx/w.onnx_data: ")
            || errors[0].message.starts_with("hf://org/repo@" + kCommit + "/onnx/w.onnx_data: "),
        errors[0].message.c_str());
    QVERIFY2(errors[0].message.find("given again") != std::string::npos, errors[0].message.c_str());
    QCOMPARE(readErrors(**remote).size(), size_t(1));
    QCOMPARE(c.hub.resolves["onnx/w.onnx_data"], 2);
}

void TestHubModel::aCachedFileIsReadFromDisk()
{
    HubCase c;
    plantCache(c.cacheDir(), {{"m/model.onnx", c.hub.files.at("m/model.onnx")}});
    auto model = c.open("hf://org/repo@" + kCommit + "/m/model.onnx");
    QVERIFY2(model && !(*model)->hasErrors(), whyNot(model).c_str());
    QCOMPARE((*model)->origin(), "hf://org/repo@" + kCommit + "/m/model.onnx");
    for (size_t i = 0; i < (*model)->tensors().size(); ++i)
        QVERIFY((*model)->read(i));
    bool askedData = false;
    for (const auto& r : c.hub.server.requests()) {
        QVERIFY2(r.target.find("model.onnx") == std::string::npos, r.target.c_str());
        askedData |= r.target.find("w.bin") != std::string::npos;
    }
    QVERIFY(askedData); // not in the cache: the Hub's
}

void TestHubModel::offlineReadsTheCacheOnly()
{
    HubCase c;
    plantCache(c.cacheDir(), c.hub.files);
    HubSettings settings = c.hub.settings(c.cacheDir());
    settings.offline = true;
    auto model = openHub("hf://org/repo/m/model.onnx", settings, c.cache);
    QVERIFY2(model && !(*model)->hasErrors(), whyNot(model).c_str());
    for (size_t i = 0; i < (*model)->tensors().size(); ++i)
        QVERIFY((*model)->read(i));
    QCOMPARE(c.hub.server.requests().size(), size_t(0));
    auto missing = openHub("hf://org/repo/m/other.onnx", settings, c.cache);
    QVERIFY(!missing);
    QVERIFY2(missing.error().message.find("HF_HUB_OFFLINE") != std::string::npos,
        missing.error().message.c_str());
    QCOMPARE(c.hub.server.requests().size(), size_t(0));
}

void TestHubModel::theCliInspectsAndVerifiesAHubModel()
{
    HubFixture hub;
    QTemporaryDir dir;
    const std::string local = writeLocally(hub.files, dir.path().toStdString() + "/local");
    const fixtures::CliOptions options = cliOptions(hub, dir);
    const QString name = "hf://org/repo/m/model.onnx";
    const auto remote = fixtures::runCli({"inspect", "--json", name}, options);
    const auto onDisk = fixtures::runCli({"inspect", "--json", QString::fromStdString(local)});
    QVERIFY2(remote.exitCode == 0, remote.err.constData());
    QCOMPARE(onDisk.exitCode, 0);
    // The same document but for where the files are: the pinned hf:// name there, paths here.
    QByteArray remoteText = remote.out;
    remoteText.replace(QByteArray::fromStdString("hf://org/repo@" + kCommit + "/m"),
        QByteArray::fromStdString(fs::path(local).parent_path().string()));
    QCOMPARE(remoteText, onDisk.out);
    const auto table = fixtures::runCli({"inspect", name}, options);
    QCOMPARE(table.exitCode, 0);
    QVERIFY2(table.out.startsWith(QByteArray::fromStdString(
                 "Model hf://org/repo@" + kCommit + "/m/model.onnx  (IR")),
        table.out.left(200).constData());
    const auto verified = fixtures::runCli({"verify", name}, options);
    QVERIFY2(verified.exitCode == 0, verified.err.constData());
    QVERIFY(verified.out.contains("ok, "));
    for (const auto* run : {&remote, &table, &verified})
        QVERIFY(!run->out.contains(kToken.c_str()) && !run->err.contains(kToken.c_str()));
    QVERIFY(!fs::exists(dir.path().toStdString() + "/cache")); // nothing written
    const auto missing = fixtures::runCli({"inspect", "hf://org/repo/m/none.onnx"}, options);
    QVERIFY(missing.exitCode != 0);
    QVERIFY2(
        missing.err.contains("hf://org/repo/m/none.onnx: no such file"), missing.err.constData());
    // verify --json names an unreadable Hub file by its name, not as a path below the folder.
    const auto unreadable
        = fixtures::runCli({"verify", "--json", "hf://org/repo/m/none.onnx"}, options);
    QVERIFY(unreadable.exitCode != 0);
    QVERIFY2(unreadable.out.contains("\"path\": \"hf://org/repo/m/none.onnx\""),
        unreadable.out.constData());
}

// Step 9: repack hf://... -o OUT writes what a repack of the same files on disk writes; the
// token is in no message and nothing goes into the HF cache.
void TestHubModel::theCliRepacksAHubModelIntoALocalFolder()
{
    HubFixture hub;
    QTemporaryDir dir;
    const std::string local = writeLocally(hub.files, dir.path().toStdString() + "/local");
    const fixtures::CliOptions options = cliOptions(hub, dir);
    const QStringList layout{"--threshold", "2KiB", "--align", "0"};
    const auto remote = fixtures::runCli(
        QStringList{"repack", "hf://org/repo/m/model.onnx", "-o", dir.filePath("a/model.onnx")}
            + layout,
        options);
    QVERIFY2(remote.exitCode == 0, remote.err.constData());
    const auto onDisk = fixtures::runCli(
        QStringList{"repack", QString::fromStdString(local), "-o", dir.filePath("b/model.onnx")}
        + layout);
    QCOMPARE(onDisk.exitCode, 0);
    for (const char* name : {"model.onnx", "model.onnx.data"}) {
        const auto bytesOf = [&](const char* folder) {
            std::ifstream in(fs::path(dir.path().toStdString()) / folder / name, std::ios::binary);
            return std::string(std::istreambuf_iterator<char>(in), {});
        };
        QVERIFY2(!bytesOf("b").empty() && bytesOf("a") == bytesOf("b"), name);
    }
    QVERIFY(!remote.out.contains(kToken.c_str()) && !remote.err.contains(kToken.c_str()));
    QVERIFY(!fs::exists(dir.path().toStdString() + "/cache")); // nothing written there
}

void TestHubModel::aRepackNeverWritesIntoTheHubCache()
{
    // The cache's snapshot files are links into blobs other snapshots share: a repack of the
    // model read from there, over the very snapshot it read, is refused, --force or not.
    HubFixture hub;
    QTemporaryDir dir;
    const fs::path cache = dir.path().toStdString() + "/cache";
    plantCache(cache, hub.files);
    const fs::path snapshot = cache / "models--org--repo" / "snapshots" / kCommit / "m";
    const auto blobsBefore = [&] {
        std::map<std::string, std::string> blobs;
        for (const auto& e : fs::directory_iterator(cache / "models--org--repo" / "blobs")) {
            std::ifstream in(e.path(), std::ios::binary);
            blobs[e.path().filename().string()]
                = std::string(std::istreambuf_iterator<char>(in), {});
        }
        return blobs;
    };
    const auto before = blobsBefore();
    fixtures::CliOptions options = cliOptions(hub, dir);
    options.env.insert("HF_HUB_OFFLINE", "1");
    for (const QString& where : {QString::fromStdString((snapshot / "model.onnx").string()),
             QString::fromStdString((cache / "elsewhere" / "model.onnx").string())}) {
        const auto refused = fixtures::runCli(
            {"repack", "hf://org/repo/m/model.onnx", "-o", where, "--threshold", "2KiB", "--force"},
            options);
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains("inside the Hugging Face cache"), refused.err.constData());
    }
    QVERIFY(fs::is_symlink(snapshot / "model.onnx"));
    QVERIFY(fs::is_symlink(snapshot / "w.bin"));
    QVERIFY(!fs::exists(cache / "elsewhere"));
    QVERIFY(blobsBefore() == before);
}

// The cache is a folder, not a prefix of names: "cache-other" beside it is written to, and the
// cache named with a trailing separator is still the cache.
void TestHubModel::aFolderBesideTheHubCacheIsNotInsideIt()
{
    HubFixture hub;
    QTemporaryDir dir;
    const fs::path cache = dir.path().toStdString() + "/cache";
    plantCache(cache, hub.files);
    const fs::path beside = dir.path().toStdString() + "/cache-other";
    fs::create_directories(beside);
    fixtures::CliOptions options = cliOptions(hub, dir);
    options.env.insert("HF_HUB_OFFLINE", "1");
    const auto saved = fixtures::runCli(
        {"repack", "hf://org/repo/m/model.onnx", "-o",
            QString::fromStdString((beside / "model.onnx").string()), "--threshold", "2KiB"},
        options);
    QVERIFY2(saved.exitCode == 0, saved.err.constData());
    QVERIFY(fs::is_regular_file(beside / "model.onnx"));

    options.env.insert("HF_HUB_CACHE", dir.path() + "/cache/");
    const auto refused = fixtures::runCli(
        {"repack", "hf://org/repo/m/model.onnx", "-o",
            QString::fromStdString((cache / "elsewhere" / "model.onnx").string()), "--threshold",
            "2KiB", "--force"},
        options);
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains("inside the Hugging Face cache"), refused.err.constData());
    QVERIFY(!fs::exists(cache / "elsewhere"));
}

void TestHubModel::theCliListsAHubFolder()
{
    HubFixture hub;
    hub.pageSize = 1;
    QTemporaryDir dir;
    const fixtures::CliOptions options = cliOptions(hub, dir);
    const auto listed = fixtures::runCli({"inspect", "hf://org/repo/m"}, options);
    QVERIFY2(listed.exitCode == 0, listed.err.constData());
    QVERIFY2(listed.out.startsWith(QByteArray::fromStdString(
                 "Folder hf://org/repo@" + kCommit + "/m/: 1 model(s), 1 data file(s)")),
        listed.out.constData());
    QVERIFY(listed.out.contains("model.onnx") && listed.out.contains("w.bin"));
    // One listing: its first page, then the page its Link names, both with the token.
    const auto requests = hub.server.requests();
    QVERIFY(requests.size() > 2);
    QCOMPARE(requests[0].method, std::string("GET"));
    QCOMPARE(requests[0].target, std::string("/api/models/org/repo/tree/main/m?recursive=true"));
    QCOMPARE(requests[1].target,
        std::string("/api/models/org/repo/tree/main/m?recursive=true&cursor=1"));
    QCOMPARE(requests[1].header("authorization"), "Bearer " + kToken);
    const auto missing = fixtures::runCli({"inspect", "hf://org/none/m/"}, options);
    QVERIFY(missing.exitCode != 0);
    QVERIFY2(missing.err.contains("hf://org/none/m/: no such repository"), missing.err.constData());
}

void TestHubModel::aHubFolderIsReportedAsTheLocalFolder_data()
{
    QTest::addColumn<int>("pageSize");
    QTest::addColumn<int>("pages");
    QTest::addRow("one page") << 100 << 1;
    QTest::addRow("two pages") << 4 << 2;
}

// `inspect hf://ORG/REPO/onnx [--json]` of an Optimum-shaped export: the report of the same
// files in a local folder, but for their names; the folder listed once, the revision resolved
// once, every model read at that commit, the data files only sized (from the listing).
void TestHubModel::aHubFolderIsReportedAsTheLocalFolder()
{
    QFETCH(int, pageSize);
    QFETCH(int, pages);
    HubFixture hub;
    hub.files = optimumFiles();
    hub.lfs = dataFilesOf(hub.files);
    hub.pageSize = size_t(pageSize);
    QTemporaryDir dir;
    writeLocally(hub.files, dir.path().toStdString() + "/local");
    const std::string local = dir.path().toStdString() + "/local/onnx/";
    const fixtures::CliOptions options = cliOptions(hub, dir);
    size_t requestsOfJson = 0;
    for (const QString format : {"--json", "--text"}) {
        QStringList remoteArgs{"inspect", "hf://org/repo/onnx"};
        QStringList localArgs{"inspect", QString::fromStdString(local)};
        if (format == "--json") {
            remoteArgs.insert(1, format);
            localArgs.insert(1, format);
        }
        const auto remote = fixtures::runCli(remoteArgs, options);
        const auto onDisk = fixtures::runCli(localArgs);
        QVERIFY2(remote.exitCode == 0, remote.err.constData());
        QVERIFY2(onDisk.exitCode == 0, onDisk.err.constData());
        QByteArray remoteText = remote.out;
        remoteText.replace(QByteArray::fromStdString("hf://org/repo@" + kCommit + "/onnx/"),
            QByteArray::fromStdString(local));
        QCOMPARE(remoteText, onDisk.out);
        if (format == "--json")
            requestsOfJson = hub.server.requests().size();
    }
    QVERIFY(requestsOfJson > 0);
    const auto all = hub.server.requests();
    const std::vector<fixtures::FaultRequest> requests(all.begin(), all.begin() + requestsOfJson);
    int listings = 0, atBranch = 0, resolves = 0, ranges = 0;
    for (const auto& r : requests) {
        QVERIFY2(r.target.find(".onnx_data") == std::string::npos, r.target.c_str()); // sized
        if (r.target.starts_with("/api/")) {
            QVERIFY2(r.target.starts_with("/api/models/org/repo/tree/main/onnx?recursive=true"),
                r.target.c_str());
            ++listings;
        } else if (r.target.find("/resolve/main/") != std::string::npos) {
            QCOMPARE(r.target, std::string("/org/repo/resolve/main/onnx/decoder_model.onnx"));
            QCOMPARE(r.method, std::string("HEAD"));
            ++atBranch;
        } else {
            QVERIFY2(
                r.target.starts_with("/org/repo/resolve/" + kCommit + "/onnx/"), r.target.c_str());
            (r.method == "HEAD" ? resolves : ranges) += 1;
        }
    }
    QCOMPARE(listings, pages);
    QCOMPARE(atBranch, 1); // pinned once, by the first model's resolve (which opening it reuses)
    QCOMPARE(resolves, 2); // the other two models, at the commit
    QCOMPARE(ranges, 3); // each model's first block, which holds its whole structure here
    qInfo("inspect --json hf://org/repo/onnx: %zu requests (%d listing page(s), 1 pin, %d "
          "resolves, %d ranges)",
        requests.size(), listings, resolves, ranges);
}

// A graph of the folder that does not parse is reported by name; the others still are.
void TestHubModel::aModelOfAHubFolderThatDoesNotParseIsNamed()
{
    HubFixture hub;
    hub.files = optimumFiles();
    hub.files["onnx/broken.onnx"] = "not a model";
    hub.lfs = dataFilesOf(hub.files);
    QTemporaryDir dir;
    const auto remote
        = fixtures::runCli({"inspect", "--json", "hf://org/repo/onnx"}, cliOptions(hub, dir));
    QCOMPARE(remote.exitCode, 1);
    QVERIFY2(remote.out.contains("\"path\": \"broken.onnx\""), remote.out.constData());
    QVERIFY2(remote.out.contains("\"code\": \"model-unreadable\""), remote.out.constData());
    QVERIFY2(remote.out.contains(
                 "broken.onnx does not load: hf://org/repo@" + kCommit + "/onnx/broken.onnx"),
        remote.out.constData());
    QCOMPARE(remote.out.count("\"tensors\": 3"), 3); // the three graphs that parse
}

// Two graphs of the folder store the same weights, each in its own data file (as Optimum's
// decoder and decoder-with-past do): the report reads them to tell (at the CDN, without the
// token) and finds what the local folder's report finds, two copies of each.
void TestHubModel::aHubFolderComparesTheWeightsItsGraphsShare()
{
    HubFixture hub;
    fixtures::addSharedDecoders(hub.files);
    hub.lfs = dataFilesOf(hub.files);
    QTemporaryDir dir;
    writeLocally(hub.files, dir.path().toStdString() + "/local");
    const std::string local = dir.path().toStdString() + "/local/onnx/";
    const auto remote
        = fixtures::runCli({"inspect", "--json", "hf://org/repo/onnx/"}, cliOptions(hub, dir));
    const auto onDisk = fixtures::runCli({"inspect", "--json", QString::fromStdString(local)});
    QVERIFY2(remote.exitCode == 0, remote.err.constData());
    QVERIFY(onDisk.out.contains("\"copies\": 2"));
    QByteArray remoteText = remote.out;
    remoteText.replace(
        QByteArray::fromStdString("hf://org/repo@" + kCommit + "/onnx/"), local.c_str());
    QCOMPARE(remoteText, onDisk.out);
    int dataRanges = 0;
    for (const auto& r : hub.server.requests())
        if (r.target.find(".onnx_data") != std::string::npos && r.method == "GET") {
            QVERIFY2(HubFixture::atCdn(r) && r.header("authorization").empty(), r.target.c_str());
            ++dataRanges;
        }
    QVERIFY(dataRanges >= 2);
}

// The branch moved between the listing and the pin (the first model resolved is not the file
// listed): the folder is listed again at the commit its models are read at.
void TestHubModel::aBranchThatMovedIsListedAgainAtTheCommit()
{
    HubFixture hub;
    hub.files = optimumFiles();
    hub.lfs = dataFilesOf(hub.files);
    hub.pageSize = 100;
    hub.branchMoved = true;
    QTemporaryDir dir;
    const auto remote
        = fixtures::runCli({"inspect", "--json", "hf://org/repo/onnx"}, cliOptions(hub, dir));
    QVERIFY2(remote.exitCode == 0, remote.err.constData());
    QVERIFY(remote.out.contains("\"tensors\": 3"));
    std::vector<std::string> listings;
    for (const auto& r : hub.server.requests())
        if (r.target.starts_with("/api/"))
            listings.push_back(r.target);
    QCOMPARE(listings.size(), size_t(2));
    QCOMPARE(listings[0], std::string("/api/models/org/repo/tree/main/onnx?recursive=true"));
    QCOMPARE(listings[1], "/api/models/org/repo/tree/" + kCommit + "/onnx?recursive=true");
}

void TestHubModel::aListingNeverLeavesTheHub()
{
    HubCase c;
    c.hub.pageSize = 1;
    c.hub.listingNext = c.hub.cdn() + "/api/models/org/repo/tree/main/m?recursive=true&cursor=1";
    HubClient client(c.hub.settings(c.cacheDir()));
    auto spec = parseSource("hf://org/repo/m/");
    QVERIFY(spec);
    auto files = client.list(*spec);
    QVERIFY(!files);
    QVERIFY2(files.error().message.find("not on the Hub") != std::string::npos,
        files.error().message.c_str());
    for (const auto& r : c.hub.server.requests())
        QVERIFY2(!HubFixture::atCdn(r), r.target.c_str());
}

void TestHubModel::aHubFolderRepacksAsItsDownloadedCopy_data()
{
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<int>("signatureUses"); // answers a CDN address is good for; 0: for ever
    QTest::addRow("one shared data file") << QStringList{"--shared-data", "model.onnx_data"} << 0;
    QTest::addRow("each graph on its own") << QStringList{"--threshold", "2KiB"} << 0;
    QTest::addRow("two graphs of three") << QStringList{"--shared-data", "model.onnx_data",
        "--models", "decoder_model.onnx,encoder_model.onnx", "--align", "4096"}
                                         << 0;
    QTest::addRow("CDN addresses that expire")
        << QStringList{"--shared-data", "model.onnx_data"} << 2;
}

// `repack hf://ORG/REPO/onnx -o OUT [--shared-data NAME]` writes, file for file and byte for
// byte, what the repack of a downloaded copy of the folder writes; every graph loads in onnx.
// The folder is listed once and pinned once; every file is read at that commit.
void TestHubModel::aHubFolderRepacksAsItsDownloadedCopy()
{
    QFETCH(QStringList, options);
    QFETCH(int, signatureUses);
    HubFixture hub;
    hub.files = sharingOptimumFiles();
    hub.lfs = dataFilesOf(hub.files);
    hub.pageSize = 100;
    hub.signatureUses = signatureUses;
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeLocally(hub.files, root / "local");
    const auto remote = fixtures::runCli(
        QStringList{"repack", "hf://org/repo/onnx", "-o", dir.filePath("a")} + options,
        cliOptions(hub, dir));
    QVERIFY2(remote.exitCode == 0, remote.err.constData());
    const auto onDisk = fixtures::runCli(
        QStringList{"repack", dir.filePath("local/onnx"), "-o", dir.filePath("b")} + options);
    QVERIFY2(onDisk.exitCode == 0, onDisk.err.constData());
    const auto written = fixtures::filesUnder(root / "a");
    const auto expected = fixtures::filesUnder(root / "b");
    QVERIFY(!expected.empty());
    QCOMPARE(written.size(), expected.size());
    for (const auto& [name, bytes] : expected) {
        QVERIFY2(written.count(name), name.c_str());
        QVERIFY2(written.at(name) == bytes, name.c_str());
        if (name.ends_with(".onnx")) {
            const QString why
                = fixtures::onnxLoadFailure(QString::fromStdString((root / "a" / name).string()));
            QVERIFY2(why.isEmpty(), qPrintable(why));
        }
    }
    if (options.contains("--shared-data")) { // each weight once: one data file, no other
        QCOMPARE(int(std::count_if(written.begin(), written.end(),
                     [](const auto& f) { return !f.first.ends_with(".onnx"); })),
            1);
    }
    int listings = 0, pins = 0, atCommit = 0, atCdn = 0;
    for (const auto& r : hub.server.requests()) {
        if (r.target.starts_with("/api/"))
            ++listings;
        else if (HubFixture::atCdn(r))
            ++atCdn;
        else {
            pins += r.target.find("/resolve/main/") != std::string::npos;
            QVERIFY2(r.target.find("/resolve/main/") != std::string::npos
                    || r.target.starts_with("/org/repo/resolve/" + kCommit + "/onnx/"),
                r.target.c_str());
            atCommit += r.target.find("/resolve/main/") == std::string::npos;
        }
    }
    QCOMPARE(listings, 1);
    QCOMPARE(pins, 1);
    if (signatureUses > 0) // the decoders' data files were asked of the Hub again
        QVERIFY(hub.resolves["onnx/decoder_model.onnx_data"] > 1);
    QVERIFY(!fs::exists(root / "cache")); // nothing written there
    qInfo("repack hf://org/repo/onnx -o OUT %s: %zu requests (1 listing, 1 pin, %d at the "
          "commit, %d at the CDN)",
        qPrintable(options.join(' ')), hub.server.requests().size(), atCommit, atCdn);
}

// A Hub folder is read, never written: without -o, or with -o naming the Hub, a usage error
// that says to name a local folder, and nothing asked of the Hub.
void TestHubModel::aHubFolderIsNeverSavedInPlace()
{
    HubFixture hub;
    hub.files = optimumFiles();
    QTemporaryDir dir;
    const fixtures::CliOptions options = cliOptions(hub, dir);
    const auto plan
        = fixtures::runCli({"plan", "hf://org/repo/onnx", "--shared-data", "m.data"}, options);
    QCOMPARE(plan.exitCode, 2);
    QVERIFY2(plan.err.contains("cannot be repacked in place: name a local output with -o"),
        plan.err.constData());
    const auto toHub = fixtures::runCli(
        {"repack", "hf://org/repo/onnx", "-o", "hf://org/repo/onnx", "--shared-data", "m.data"},
        options);
    QCOMPARE(toHub.exitCode, 2);
    QVERIFY2(toHub.err.contains("the output must be a local path"), toHub.err.constData());
    const auto noOutput
        = fixtures::runCli({"repack", "hf://org/repo/onnx", "--shared-data", "m.data"}, options);
    QCOMPARE(noOutput.exitCode, 2);
    QVERIFY(hub.server.requests().empty());
    // And plan with -o LOCAL says what the save would write, writing nothing.
    const auto planned = fixtures::runCli(
        {"plan", "hf://org/repo/onnx", "-o", dir.filePath("out"), "--shared-data", "m.data"},
        options);
    QVERIFY2(planned.exitCode == 0, planned.err.constData());
    QVERIFY2(planned.out.contains("3 graph(s) would read"), planned.out.constData());
    QVERIFY(!fs::exists(dir.filePath("out").toStdString()));
}

void TestHubModel::aHubFolderIsNeverSavedIntoTheHubCache()
{
    HubFixture hub;
    hub.files = optimumFiles();
    hub.lfs = dataFilesOf(hub.files);
    QTemporaryDir dir;
    const fs::path cache = dir.path().toStdString() + "/cache";
    fs::create_directories(cache);
    for (const QStringList& layout :
        {QStringList{"--shared-data", "m.data"}, QStringList{"--threshold", "2KiB"}}) {
        const auto refused = fixtures::runCli(
            QStringList{"repack", "hf://org/repo/onnx", "-o",
                QString::fromStdString((cache / "elsewhere").string()), "--force"}
                + layout,
            cliOptions(hub, dir));
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains("inside the Hugging Face cache"), refused.err.constData());
    }
    QVERIFY(!fs::exists(cache / "elsewhere"));
}

// A data file served as another version (ETag) after its first read: the save fails as
// Changed, naming the file, not retried, and the output folder is as it was (empty).
void TestHubModel::aFileChangedDuringTheSaveLeavesTheOutputAsItWas()
{
    HubFixture hub;
    hub.files = sharingOptimumFiles();
    hub.lfs = dataFilesOf(hub.files);
    hub.changesAfterFirstRead = "onnx/decoder_with_past_model.onnx_data";
    QTemporaryDir dir;
    const fs::path out = dir.path().toStdString() + "/out";
    fs::create_directories(out);
    const auto run = fixtures::runCli(
        {"repack", "hf://org/repo/onnx", "-o", QString::fromStdString(out.string()),
            "--shared-data", "model.onnx_data"},
        cliOptions(hub, dir));
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains("changed on the server"), run.err.constData());
    QVERIFY2(run.err.contains("decoder_with_past_model.onnx_data"), run.err.constData());
    QVERIFY2(!run.err.contains("reading the folder again"), run.err.constData());
    QVERIFY(hub.cdnAnswers[hub.changesAfterFirstRead] > 1);
    QVERIFY(fs::is_directory(out));
    QVERIFY(fs::is_empty(out));
}

// Cancelled while the shared data file is written: Cancelled, nothing at the output.
void TestHubModel::aCancelledFolderSaveLeavesNothing()
{
    HubCase c;
    c.hub.files = sharingOptimumFiles();
    c.hub.lfs = dataFilesOf(c.hub.files);
    auto spec = parseSource("hf://org/repo/onnx/");
    QVERIFY(spec);
    CancelToken cancel;
    auto folder = openHubFolder(*spec, c.hub.settings(c.cacheDir()), &cancel, &c.cache);
    QVERIFY2(folder, folder ? "" : folder.error().message.c_str());
    const fs::path out = c.dir.path().toStdString() + "/out";
    FolderSaveOptions options;
    options.sharedData = "model.onnx_data";
    options.controls.cancel = &cancel;
    bool wrote = false;
    options.controls.progress = [&](const Progress& p) {
        if (p.phase == kPhaseWriting && p.bytesDone > 0) {
            wrote = true;
            cancel.cancel();
        }
    };
    auto saved = saveFolder(**folder, out, options);
    QVERIFY(wrote);
    QVERIFY(!saved);
    QVERIFY2(saved.error().is(ErrorKind::Cancelled), saved.error().message.c_str());
    QVERIFY(!fs::exists(out));
}

namespace {

// Replaces `path` on `hub`, a new version of it under the same commit: a file the Hub keeps
// itself is one byte longer (its ETag is made of its size); the CDN serves one in LFS with
// another ETag from its next answer on. Called between requests (from a save's progress), so
// the server's thread reads what it changed only after it changed.
void replaceOnHub(HubFixture& hub, const std::string& path)
{
    if (!hub.lfs.count(path)) {
        hub.files[path] += '\0';
        return;
    }
    hub.cdnAnswers[path] = 1; // as answered once before: the next answer is the new version
    hub.changesAfterFirstRead = path;
}

} // namespace

void TestHubModel::aHubFileReplacedAfterItWasReadFailsTheSave_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<bool>("inLfs");
    QTest::addRow("the .onnx, kept by the Hub") << "m/model.onnx" << false;
    QTest::addRow("the .onnx, in LFS") << "m/model.onnx" << true;
    QTest::addRow("a data file, in LFS") << "m/w.bin" << true;
}

// A file of the model replaced once the save has copied every byte, before its commit point:
// the save asks again whether each file read is still the version read, finds it is not
// (Changed, naming the hf:// file) and writes nothing.
void TestHubModel::aHubFileReplacedAfterItWasReadFailsTheSave()
{
    QFETCH(QString, file);
    QFETCH(bool, inLfs);
    const std::string path = file.toStdString();
    HubCase c;
    if (inLfs)
        c.hub.lfs.insert(path);
    auto model = c.open("hf://org/repo/m/model.onnx");
    QVERIFY2(whyNot(model).empty(), whyNot(model).c_str());
    const fs::path out = c.dir.path().toStdString() + "/out";
    fs::create_directories(out);
    bool replaced = false;
    SaveOptions options;
    options.progress = [&](const Progress& p) {
        if (!replaced && p.bytesDone == p.bytesTotal) {
            replaceOnHub(c.hub, path);
            replaced = true;
        }
    };
    auto saved = save(**model, out / "model.onnx", options);
    QVERIFY(replaced);
    QVERIFY_FAILS_WITH(saved, "hf://org/repo@" + kCommit + "/" + path + ": changed on the server");
    QCOMPARE(saved.error().kind, ErrorKind::Changed);
    QVERIFY(fs::is_empty(out));
}

void TestHubModel::aHubFolderFileReplacedAfterItWasReadFailsTheFolderSave_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("sharedData"); // empty: each graph saved on its own
    for (const QString& shared : {QStringLiteral("model.onnx_data"), QString()}) {
        const char* layout = shared.isEmpty() ? "each graph on its own" : "one shared data file";
        QTest::addRow("%s, a graph's .onnx", layout) << "onnx/decoder_model.onnx" << shared;
        QTest::addRow("%s, a graph's data file", layout)
            << "onnx/decoder_model.onnx_data" << shared;
    }
}

// The same for a folder: every graph's files are asked again before the first commit (with one
// shared data file), or before each graph's own (each on its own: here the first graph's), and
// the output folder is not made.
void TestHubModel::aHubFolderFileReplacedAfterItWasReadFailsTheFolderSave()
{
    QFETCH(QString, file);
    QFETCH(QString, sharedData);
    const std::string path = file.toStdString();
    HubCase c;
    c.hub.files = sharingOptimumFiles();
    c.hub.lfs = dataFilesOf(c.hub.files);
    c.hub.pageSize = 100;
    auto spec = parseSource("hf://org/repo/onnx/");
    QVERIFY(spec);
    auto folder = openHubFolder(*spec, c.hub.settings(c.cacheDir()), nullptr, &c.cache);
    QVERIFY2(folder, folder ? "" : folder.error().message.c_str());
    const fs::path out = c.dir.path().toStdString() + "/out";
    FolderSaveOptions options;
    options.sharedData = sharedData.toStdString();
    bool replaced = false;
    options.controls.progress = [&](const Progress& p) {
        if (!replaced && p.phase != kPhaseComparing && p.bytesDone == p.bytesTotal) {
            replaceOnHub(c.hub, path);
            replaced = true;
        }
    };
    auto saved = saveFolder(**folder, out, options);
    QVERIFY(replaced);
    QVERIFY_FAILS_WITH(saved, "hf://org/repo@" + kCommit + "/" + path + ": changed on the server");
    QCOMPARE(saved.error().kind, ErrorKind::Changed);
    QVERIFY(!fs::exists(out));
}

QTEST_GUILESS_MAIN(TestHubModel)
#include "tst_hub_model.moc"
