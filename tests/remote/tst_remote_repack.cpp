// A model on a web server repacked to a local folder (issue 38 step 9): `repack URL -o OUT`
// writes byte for byte what a repack of a downloaded copy writes, with every layout option, the
// inline payloads the remote structure leaves out read from the server (never its zeros), each
// byte fetched about once; a failed, changed or cancelled read leaves nothing in OUT, its error
// naming the file and the tensor, and so does a file replaced on the server after its last
// read, found before the commit point; in place (or to a URL) is a usage error. Against Debian's
// nginx on 127.0.0.1 and a FaultServer for what nginx never does.
#include "core/io/block_cache.h"
#include "core/io/source_spec.h"
#include "core/model/model.h"
#include "core/remote/http_source.h"
#include "core/save/save.h"
#include "tests/support/cli_run.h"
#include "tests/support/fault_server.h"
#include "tests/support/model_checks.h"
#include "tests/support/nginx_fixture.h"
#include "tests/support/quick_http.h"
#include "tests/support/replacing_server.h"
#include "tests/support/result_checks.h"
#include "tests/support/served_models.h"
#include "tests/support/tensor_builder.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>

using namespace repack;
namespace fs = std::filesystem;

namespace {

// A tensor larger than the save's copy buffer (8 MiB) and not a multiple of a block, in its own
// data file: its bytes come from the server in several pieces.
constexpr int64_t kBigFloats = (9 << 18) + 4099;

// servedModel's model with "big" in big.bin too, all written into `dir` as model.onnx.
void writeServedModel(const fs::path& dir)
{
    onnx::ModelProto model = fixtures::servedModel(dir, true);
    onnx::TensorProto big = fixtures::rawTensor("big", onnx::TensorProto::FLOAT, {kBigFloats});
    std::ofstream(dir / "big.bin", std::ios::binary) << big.raw_data();
    big.clear_raw_data();
    fixtures::setExternal(big, "big.bin", std::nullopt, std::nullopt);
    *model.mutable_graph()->add_initializer() = big;
    fixtures::writeModelFile(model, dir / "model.onnx");
}

std::string fileBytes(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every file under `dir` (relative names) and its bytes.
std::map<std::string, std::string> filesUnder(const fs::path& dir)
{
    std::map<std::string, std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir))
        if (entry.is_regular_file())
            files[entry.path().lexically_relative(dir).string()] = fileBytes(entry.path());
    return files;
}

std::set<std::string> namesUnder(const fs::path& dir)
{
    std::set<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator(dir))
        names.insert(entry.path().lexically_relative(dir).string());
    return names;
}

// onnx.load (python3-onnx, the strictest reader) of `path`: "" when it loads, else why not.
QString pythonLoadFailure(const fs::path& path)
{
    QProcess python;
    python.start(qEnvironmentVariable("REPACK_PYTHON", QStringLiteral("/usr/bin/python3")),
        {"-c", "import sys, onnx; onnx.load(sys.argv[1])", QString::fromStdString(path.string())});
    if (!python.waitForFinished(120000))
        return "python did not finish";
    if (python.exitStatus() != QProcess::NormalExit || python.exitCode() != 0)
        return QString::fromUtf8(python.readAllStandardError());
    return {};
}

// writeServedModel's files at /m/ of a FaultServer: big.bin is answered as a file (ETag "v1")
// when the model is opened, and every later request of it (a save reading its bytes) with
// `fault`: "reset" (the body cut short), "503", "range" (a Content-Range one byte off), "etag"
// (another version of the file).
class FaultyModelServer {
public:
    explicit FaultyModelServer(std::string fault)
        : m_fault(std::move(fault))
    {
        const fs::path dir = m_dir.path().toStdString();
        writeServedModel(dir);
        for (const char* name : {"model.onnx", "w.bin", "big.bin"})
            m_files["/m/" + std::string(name)] = fileBytes(dir / name);
        m_server = std::make_unique<fixtures::FaultServer>(
            [this](int socket, const fixtures::FaultRequest& request, int) {
                answer(socket, request);
            });
    }
    std::string url(const std::string& name) const { return m_server->url("m/" + name); }
    int bigRequests() const { return m_bigRequests; }

private:
    void answer(int socket, const fixtures::FaultRequest& request)
    {
        using fixtures::FaultServer;
        const auto file = m_files.find(request.target);
        if (file == m_files.end()) {
            FaultServer::respond(socket, "404 Not Found", {}, "no");
            return;
        }
        const std::string& bytes = file->second;
        if (request.target != "/m/big.bin" || m_bigRequests++ == 0) {
            FaultServer::answerAsFile(socket, request, bytes, "\"v1\"");
            return;
        }
        const auto [first, last] = request.range.value_or(std::make_pair(uint64_t(0), uint64_t(0)));
        if (m_fault == "reset")
            FaultServer::answerAsFile(socket, request, bytes, "\"v1\"", 1000);
        else if (m_fault == "503")
            FaultServer::respond(socket, "503 Service Unavailable", {}, "busy");
        else if (m_fault == "range")
            FaultServer::respond(socket, "206 Partial Content",
                {"Content-Range: bytes " + std::to_string(first + 1) + "-"
                        + std::to_string(last + 1) + "/" + std::to_string(bytes.size()),
                    "ETag: \"v1\""},
                std::string_view(bytes).substr(first, last - first + 1));
        else
            FaultServer::answerAsFile(socket, request, bytes, "\"v2\"");
    }

    const std::string m_fault;
    QTemporaryDir m_dir;
    std::map<std::string, std::string> m_files;
    std::atomic<int> m_bigRequests{0};
    std::unique_ptr<fixtures::FaultServer> m_server; // last: stopped before the rest goes
};

// The model at `url` and its data files, each an HttpSource with `options` reading through
// `cache`.
Result<std::unique_ptr<Model>> openServed(
    const std::string& url, BlockCache& cache, const HttpOptions& options = {})
{
    auto spec = parseSource(url);
    if (!spec)
        return spec.error();
    return openRemoteModel(*spec,
        [&cache, options](const SourceSpec& file, FileRole role,
            const CancelToken* cancel) -> Result<std::shared_ptr<ByteSource>> {
            auto opened = HttpSource::open(file.url, options, cancel, &cache, role);
            if (!opened)
                return opened.error();
            return std::shared_ptr<ByteSource>(*opened);
        });
}

// writeServedModel's files served by nginx as m/, the model opened from there (openServed).
struct NginxServedModel {
    fixtures::NginxFixture nginx;
    BlockCache cache; // the model's own: what it fetched
    Result<std::unique_ptr<Model>> model = Error::internal("not served");
    // Serves and opens: "" then, else why not.
    QString serve()
    {
        writeServedModel(nginx.www() / "m");
        if (const QString why = nginx.start(); !why.isEmpty())
            return why;
        model = openServed(nginx.url("m/model.onnx"), cache);
        return model ? QString() : QString::fromStdString(model.error().message);
    }
};

} // namespace

class TestRemoteRepack : public QObject {
    Q_OBJECT
private slots:
    void aUrlRepacksAsItsDownloadedCopy_data();
    void aUrlRepacksAsItsDownloadedCopy();
    void eachByteIsFetchedOnceAndTheSavedModelIsLocal();
    void inPlaceOrToAUrlIsAUsageError();
    void aFailedReadLeavesNothing_data();
    void aFailedReadLeavesNothing();
    void theCliSaysWhatChangedOnTheServer();
    void aCancelledSaveLeavesNothing();
    void aFileReplacedAfterItWasReadIsChangedAndNothingIsWritten_data();
    void aFileReplacedAfterItWasReadIsChangedAndNothingIsWritten();
    void nginxSaysAFileReplacedAfterItWasReadIsAnotherVersion_data();
    void nginxSaysAFileReplacedAfterItWasReadIsAnotherVersion();
};

void TestRemoteRepack::aUrlRepacksAsItsDownloadedCopy_data()
{
    QTest::addColumn<QStringList>("options");
    QTest::addRow("defaults") << QStringList{};
    // The 1 MiB inline weights stay inline: their bytes are not in the remote structure.
    QTest::addRow("threshold above the inline weights") << QStringList{"--threshold", "2MiB"};
    QTest::addRow("inline all") << QStringList{"--inline"};
    QTest::addRow("data file name, alignment")
        << QStringList{"--data", "w.data", "--align", "64KiB", "--align-threshold", "1"};
    QTest::addRow("dense, by size") << QStringList{"--align", "0", "--order", "size"};
    QTest::addRow("shards") << QStringList{"--shard-size", "3MiB"};
    QTest::addRow("checksum, dedupe") << QStringList{"--checksum", "--dedupe"};
    QTest::addRow("safetensors") << QStringList{"--format", "safetensors"};
    QTest::addRow("keep") << QStringList{"--keep"};
    QTest::addRow("target web") << QStringList{"--target", "web"};
    QTest::addRow("no attributes") << QStringList{"--no-attributes", "--threshold", "100KiB"};
}

void TestRemoteRepack::aUrlRepacksAsItsDownloadedCopy()
{
    QFETCH(QStringList, options);
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    writeServedModel(nginx.www() / "m");
    const QString why = nginx.start();
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QTemporaryDir work;
    const fs::path root = work.path().toStdString();
    fs::copy(nginx.www() / "m", root / "copy", fs::copy_options::recursive);
    const QString url = QString::fromStdString(nginx.url("m/model.onnx"));
    const auto remote
        = fixtures::runCli(QStringList{"repack", url, "-o",
                               QString::fromStdString((root / "a" / "model.onnx").string())}
            + options);
    QVERIFY2(remote.exitCode == 0, (remote.out + remote.err).constData());
    const auto local = fixtures::runCli(
        QStringList{"repack", QString::fromStdString((root / "copy" / "model.onnx").string()), "-o",
            QString::fromStdString((root / "b" / "model.onnx").string())}
        + options);
    QVERIFY2(local.exitCode == 0, (local.out + local.err).constData());
    const auto a = filesUnder(root / "a");
    const auto b = filesUnder(root / "b");
    QCOMPARE(namesUnder(root / "a"), namesUnder(root / "b"));
    for (const auto& [name, bytes] : b)
        QVERIFY2(a.at(name) == bytes, (name + " differs from the local repack's").c_str());
    const QString python = pythonLoadFailure(root / "a" / "model.onnx");
    QVERIFY2(python.isEmpty(), qPrintable(python));
    // plan of the URL prints the plan of the copy (--checksum is repack's alone).
    options.removeAll("--checksum");
    const auto planRemote
        = fixtures::runCli(QStringList{"plan", "--json", url, "-o",
                               QString::fromStdString((root / "p" / "model.onnx").string())}
            + options);
    const auto planLocal
        = fixtures::runCli(QStringList{"plan", "--json",
                               QString::fromStdString((root / "copy" / "model.onnx").string()),
                               "-o", QString::fromStdString((root / "p" / "model.onnx").string())}
            + options);
    QVERIFY2(planRemote.exitCode == 0, planRemote.err.constData());
    QCOMPARE(planRemote.out, planLocal.out);
    QVERIFY(!fs::exists(root / "p"));
}

void TestRemoteRepack::eachByteIsFetchedOnceAndTheSavedModelIsLocal()
{
    SKIP_WITHOUT_NGINX();
    NginxServedModel served;
    QCOMPARE(served.serve(), QString());
    auto& model = served.model;
    QTemporaryDir out;
    const fs::path target = fs::path(out.path().toStdString()) / "model.onnx";
    SaveOptions options;
    options.threshold = 2 << 20; // the inline weights stay inline: spliced into both model temps
    auto saved = save(**model, target, options);
    QVERIFY2(saved, saved ? "" : saved.error().message.c_str());
    uint64_t bytes = 0;
    for (const char* name : {"model.onnx", "w.bin", "big.bin"})
        bytes += fs::file_size(served.nginx.www() / "m" / name);
    // Each byte once, but for the blocks at the edges of the tensors read straight.
    const uint64_t fetched = served.cache.stats().fetchedBytes;
    QVERIFY2(fetched <= bytes + 4 * BlockCache::kBlockBytes,
        (std::to_string(fetched) + " fetched of " + std::to_string(bytes)).c_str());
    // The model is the local one now: reads come from the files written, not the server.
    QVERIFY(!(*model)->isRemote());
    QCOMPARE((*model)->path(), target);
    served.nginx.stop();
    auto reloaded = Model::load(target);
    QVERIFY(reloaded);
    fixtures::compareTensorBytes(**model, **reloaded);
}

void TestRemoteRepack::inPlaceOrToAUrlIsAUsageError()
{
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    writeServedModel(nginx.www() / "m");
    const QString why = nginx.start();
    QVERIFY2(why.isEmpty(), qPrintable(why));
    const QString url = QString::fromStdString(nginx.url("m/model.onnx"));
    const auto before = namesUnder(nginx.www());
    const auto plan = fixtures::runCli({"plan", url});
    QCOMPARE(plan.exitCode, 2);
    QVERIFY2(plan.err.contains("cannot be repacked in place: name a local output with -o"),
        plan.err.constData());
    const auto repack = fixtures::runCli({"repack", url, "-o", url});
    QCOMPARE(repack.exitCode, 2);
    QVERIFY2(repack.err.contains("the output must be a local path"), repack.err.constData());
    QCOMPARE(namesUnder(nginx.www()), before);
}

void TestRemoteRepack::aFailedReadLeavesNothing_data()
{
    QTest::addColumn<QString>("fault");
    QTest::addColumn<int>("kind");
    QTest::addRow("connection reset mid-body") << "reset" << int(ErrorKind::Io);
    QTest::addRow("503 every time") << "503" << int(ErrorKind::Io);
    QTest::addRow("wrong Content-Range") << "range" << int(ErrorKind::Corrupt);
    QTest::addRow("file changed on the server") << "etag" << int(ErrorKind::Changed);
}

void TestRemoteRepack::aFailedReadLeavesNothing()
{
    QFETCH(QString, fault);
    QFETCH(int, kind);
    FaultyModelServer server(fault.toStdString());
    BlockCache cache;
    auto model = openServed(server.url("model.onnx"), cache, fixtures::quickHttpOptions());
    QVERIFY2(model, model ? "" : model.error().message.c_str());
    QVERIFY2(!(*model)->hasErrors(), fixtures::firstError(**model).c_str());
    QTemporaryDir out;
    const fs::path outDir = out.path().toStdString();
    auto saved = save(**model, outDir / "model.onnx", SaveOptions{});
    QVERIFY(!saved);
    QVERIFY2(saved.error().is(static_cast<ErrorKind>(kind)), saved.error().message.c_str());
    // The error names the tensor and the file it was read from.
    QVERIFY2(saved.error().message.find("graph/big") != std::string::npos,
        saved.error().message.c_str());
    QVERIFY2(saved.error().message.find(server.url("big.bin")) != std::string::npos,
        saved.error().message.c_str());
    QVERIFY2(server.bigRequests() > 1, "the save did not read big.bin");
    // Nothing written: no temporary, no model, not even the folder made for it.
    QCOMPARE(namesUnder(outDir), std::set<std::string>{});
    QVERIFY((*model)->isRemote());
}

void TestRemoteRepack::theCliSaysWhatChangedOnTheServer()
{
    // The file on the server is another version by the time the repack reads its bytes: the
    // exit code of `changed`, the file and the tensor named, nothing written, no retry.
    FaultyModelServer server("etag");
    QTemporaryDir out;
    const QString target = out.filePath("model.onnx");
    const auto run = fixtures::runCli(
        {"repack", QString::fromStdString(server.url("model.onnx")), "-o", target});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains("graph/big"), run.err.constData());
    QVERIFY2(
        run.err.contains(QByteArray::fromStdString(server.url("big.bin"))), run.err.constData());
    QVERIFY2(!run.err.contains("reading it again"), run.err.constData());
    QCOMPARE(namesUnder(out.path().toStdString()), std::set<std::string>{});
}

void TestRemoteRepack::aCancelledSaveLeavesNothing()
{
    SKIP_WITHOUT_NGINX();
    NginxServedModel served;
    QCOMPARE(served.serve(), QString());
    auto& model = served.model;
    QTemporaryDir out;
    const fs::path outDir = out.path().toStdString();
    CancelToken cancel;
    SaveOptions options;
    options.cancel = &cancel;
    options.progress = [&](const Progress& p) {
        if (p.bytesDone > 0)
            cancel.cancel();
    };
    auto saved = save(**model, outDir / "model.onnx", options);
    QVERIFY(!saved);
    QVERIFY2(saved.error().is(ErrorKind::Cancelled), saved.error().message.c_str());
    QCOMPARE(namesUnder(outDir), std::set<std::string>{});
}

void TestRemoteRepack::aFileReplacedAfterItWasReadIsChangedAndNothingIsWritten_data()
{
    QTest::addColumn<QString>("file");
    QTest::addRow("the .onnx") << "model.onnx";
    QTest::addRow("a data file") << "big.bin";
}

// The file is replaced on the server after the repack read its last byte and before the commit
// point, where no check of a read can see it: the save asks again whether every file it read is
// still the version read. Exit `changed`, the file named, nothing at OUT.
void TestRemoteRepack::aFileReplacedAfterItWasReadIsChangedAndNothingIsWritten()
{
    QFETCH(QString, file);
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeServedModel(root / "m");
    fixtures::ReplacingServer server(root, "served", "m/" + file.toStdString());
    fs::create_directories(root / "out");
    const auto run = fixtures::runCli({"repack", QString::fromStdString(server.url("m/model.onnx")),
        "-o", QString::fromStdString((root / "out" / "model.onnx").string())});
    QCOMPARE(run.exitCode, kindInfo(ErrorKind::Changed).exitCode);
    QVERIFY(server.replaced());
    QVERIFY2(run.err.contains(QByteArray::fromStdString(
                 server.url("m/" + file.toStdString()) + ": changed on the server")),
        run.err.constData());
    QCOMPARE(namesUnder(root / "out"), std::set<std::string>{});
}

void TestRemoteRepack::nginxSaysAFileReplacedAfterItWasReadIsAnotherVersion_data()
{
    QTest::addColumn<QString>("file");
    QTest::addRow("the .onnx") << "model.onnx";
    QTest::addRow("a data file") << "big.bin";
}

// The same against nginx, which answers the If-Match of the question with 412: the file is
// replaced (renamed over, as a deploy does) once the save has copied every byte.
void TestRemoteRepack::nginxSaysAFileReplacedAfterItWasReadIsAnotherVersion()
{
    QFETCH(QString, file);
    SKIP_WITHOUT_NGINX();
    NginxServedModel served;
    QCOMPARE(served.serve(), QString());
    const fs::path path = served.nginx.www() / "m" / file.toStdString();
    QTemporaryDir out;
    const fs::path outDir = out.path().toStdString();
    bool replaced = false;
    SaveOptions options;
    options.progress = [&](const Progress& p) {
        if (replaced || p.bytesDone < p.bytesTotal)
            return;
        std::string bytes = fileBytes(path);
        bytes[bytes.size() / 2] ^= 1;
        std::ofstream(path.string() + ".new", std::ios::binary) << bytes;
        // nginx's ETag is made of the time in seconds: another second, another ETag.
        fs::last_write_time(
            path.string() + ".new", fs::last_write_time(path) + std::chrono::hours(1));
        fs::rename(path.string() + ".new", path);
        replaced = true;
    };
    auto saved = save(**served.model, outDir / "model.onnx", options);
    QVERIFY(replaced);
    QVERIFY_FAILS_WITH(
        saved, served.nginx.url("m/" + file.toStdString()) + ": changed on the server");
    QCOMPARE(saved.error().kind, ErrorKind::Changed);
    QCOMPARE(namesUnder(outDir), std::set<std::string>{});
    QVERIFY((*served.model)->isRemote());
}

QTEST_GUILESS_MAIN(TestRemoteRepack)
#include "tst_remote_repack.moc"
