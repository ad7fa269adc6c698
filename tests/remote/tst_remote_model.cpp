// A model on a web server (issue 38), served by Debian's nginx on 127.0.0.1: Model::openRemote
// indexes it as Model::load indexes the same files on disk, fetching its structure and not its
// weights; every tensor read from it is the file's bytes (never the zeros of a byte left out);
// its external data is found beside it and never outside the server's root; a file changed on
// the server fails the reads (its save to a local folder: tst_remote_repack). The CLI's inspect and
// verify take its URL. A file that is no model is refused at its first block, not downloaded.
#include "core/model/model.h"
#include "core/remote/http_source.h"
#include "tests/support/cli_run.h"
#include "tests/support/model_builder.h"
#include "tests/support/model_checks.h"
#include "tests/support/nginx_fixture.h"
#include "tests/support/served_models.h"
#include "tests/support/tensor_builder.h"

#include "core/io/source_spec.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <random>

using namespace repack;
namespace fs = std::filesystem;

namespace {

// Serves `model` as m/model.onnx (its data files already in nginx's folder) and opens it.
Result<std::unique_ptr<Model>> serveAndOpen(
    fixtures::NginxFixture& nginx, const onnx::ModelProto& model, BlockCache& cache)
{
    fixtures::writeModelFile(model, nginx.www() / "m" / "model.onnx");
    if (const QString why = nginx.start(); !why.isEmpty())
        return Error::io(why.toStdString());
    return openHttpModel(nginx.url("m/model.onnx"), &cache);
}

} // namespace

class TestRemoteModel : public QObject {
    Q_OBJECT
private slots:
    void indexesAsTheFileOnDiskWithoutItsWeights();
    void everyTensorReadIsTheFilesBytes();
    void externalDataBesideIt();
    void anExternalModelIsItsStructureAndOneRequestPerDataFile();
    void missingOrEscapingDataIsAProblem();
    void aFileChangedOnTheServerFailsItsReads();
    void theCliInspectsAndVerifiesAUrl();
    void theCliDiffsAUrlAgainstALocalCopy();
    void twoServedFilesOfOneSizeAreCompared();
    void aFileThatIsNoModelIsRefusedAtItsFirstBlock_data();
    void aFileThatIsNoModelIsRefusedAtItsFirstBlock();
};

void TestRemoteModel::indexesAsTheFileOnDiskWithoutItsWeights()
{
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    BlockCache cache;
    auto remote = serveAndOpen(nginx, fixtures::servedModel(nginx.www() / "m", false), cache);
    QVERIFY2(remote, remote ? "" : remote.error().message.c_str());
    auto local = Model::load(nginx.www() / "m" / "model.onnx");
    QVERIFY(local);
    QCOMPARE((*remote)->tensors().size(), (*local)->tensors().size());
    for (size_t i = 0; i < (*local)->tensors().size(); ++i) {
        const TensorInfo& r = (*remote)->tensors()[i];
        const TensorInfo& l = (*local)->tensors()[i];
        QCOMPARE(r.qualifiedName(), l.qualifiedName());
        QCOMPARE(r.storage, l.storage);
        QCOMPARE(r.byteSize(), l.byteSize());
        QVERIFY(r.inlineRange == l.inlineRange);
    }
    QCOMPARE((*remote)->problems().size(), (*local)->problems().size());
    QVERIFY((*remote)->isRemote());
    QCOMPARE((*remote)->origin(), nginx.url("m/model.onnx"));
    // The structure only: the 3 MiB of weights stay on the server.
    const uint64_t size = fs::file_size(nginx.www() / "m" / "model.onnx");
    QVERIFY2(cache.stats().fetchedBytes < size / 2,
        (std::to_string(cache.stats().fetchedBytes) + " of " + std::to_string(size)).c_str());
}

void TestRemoteModel::everyTensorReadIsTheFilesBytes()
{
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    BlockCache cache;
    auto remote = serveAndOpen(nginx, fixtures::servedModel(nginx.www() / "m", true), cache);
    QVERIFY2(remote, remote ? "" : remote.error().message.c_str());
    auto local = Model::load(nginx.www() / "m" / "model.onnx");
    QVERIFY(local);
    QVERIFY2(!(*local)->hasErrors(), fixtures::firstError(**local).c_str());
    fixtures::compareTensorBytes(**remote, **local);
}

void TestRemoteModel::externalDataBesideIt()
{
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    BlockCache cache;
    auto remote = serveAndOpen(nginx, fixtures::servedModel(nginx.www() / "m", true), cache);
    QVERIFY2(remote, remote ? "" : remote.error().message.c_str());
    QVERIFY2(!(*remote)->hasErrors(), fixtures::firstError(**remote).c_str());
    const TensorInfo* ext = nullptr;
    for (const TensorInfo& t : (*remote)->tensors())
        if (t.name == "ext_b")
            ext = &t;
    QVERIFY(ext && ext->isExternal() && ext->external->file());
    QCOMPARE(ext->external->resolvedPath().string(), nginx.url("m/w.bin"));
}

void TestRemoteModel::anExternalModelIsItsStructureAndOneRequestPerDataFile()
{
    // Issue 38's count: the .onnx in at most 3 requests (no HEAD of its own: the first GET says
    // its size), and one request per data file, which is only sized.
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    onnx::ModelProto model = fixtures::emptyModel();
    std::string weights;
    for (int i = 0; i < 30000; ++i) {
        onnx::TensorProto t = fixtures::rawTensor(
            "expert_" + std::to_string(i) + "_weight", onnx::TensorProto::FLOAT, {4});
        t.clear_raw_data();
        fixtures::setExternal(t, "w.bin", std::to_string(weights.size()), "16");
        weights += std::string(16, static_cast<char>(i));
        *model.mutable_graph()->add_initializer() = t;
    }
    fs::create_directories(nginx.www() / "m");
    std::ofstream(nginx.www() / "m" / "w.bin", std::ios::binary) << weights;
    QVERIFY(model.ByteSizeLong() > 2 * BlockCache::kBlockBytes); // more than one request's worth
    BlockCache cache;
    auto remote = serveAndOpen(nginx, model, cache);
    QVERIFY2(remote, remote ? "" : remote.error().message.c_str());
    QVERIFY2(!(*remote)->hasErrors(), fixtures::firstError(**remote).c_str());
    QCOMPARE((*remote)->tensors().size(), size_t(30000));
    size_t ofModel = 0;
    std::vector<std::string> ofData;
    for (const std::string& request : nginx.requests()) {
        QVERIFY2(request != "HEAD /m/model.onnx", "the model's size comes with its first bytes");
        if (request.ends_with("/m/model.onnx"))
            ++ofModel;
        else
            ofData.push_back(request);
    }
    QVERIFY2(ofModel >= 1 && ofModel <= 3, std::to_string(ofModel).c_str());
    QCOMPARE(ofData, std::vector<std::string>{"HEAD /m/w.bin"});
}

void TestRemoteModel::missingOrEscapingDataIsAProblem()
{
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    onnx::ModelProto model = fixtures::servedModel(nginx.www() / "m", true);
    fs::remove(nginx.www() / "m" / "w.bin");
    onnx::TensorProto up = fixtures::rawTensor("up", onnx::TensorProto::FLOAT, {4});
    up.clear_raw_data();
    fixtures::setExternal(up, "../secret.bin", "0", "16");
    *model.mutable_graph()->add_initializer() = up;
    std::ofstream(nginx.www() / "secret.bin") << std::string(16, 's');
    BlockCache cache;
    auto remote = serveAndOpen(nginx, model, cache);
    QVERIFY2(remote, remote ? "" : remote.error().message.c_str());
    bool missing = false;
    bool escapes = false;
    for (const Problem& p : (*remote)->problems()) {
        missing |= p.code == "missing-file"
            && p.message.find(nginx.url("m/w.bin")) != std::string::npos;
        escapes |= p.code == "location-escapes" && p.tensor == "graph/up";
    }
    QVERIFY(missing);
    QVERIFY(escapes);
    for (const TensorInfo& t : (*remote)->tensors())
        if (t.isExternal())
            QVERIFY(!t.external->file());
}

void TestRemoteModel::aFileChangedOnTheServerFailsItsReads()
{
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    BlockCache cache;
    auto remote = serveAndOpen(nginx, fixtures::servedModel(nginx.www() / "m", true), cache);
    QVERIFY2(remote, remote ? "" : remote.error().message.c_str());
    // Another data file of the same size, a second later (nginx's ETag is mtime and size).
    const fs::path data = nginx.www() / "m" / "w.bin";
    std::string replaced(fs::file_size(data), 'x');
    std::ofstream(data.string() + ".new", std::ios::binary) << replaced;
    fs::last_write_time(
        data.string() + ".new", fs::last_write_time(data) + std::chrono::seconds(5));
    fs::rename(data.string() + ".new", data);
    for (size_t i = 0; i < (*remote)->tensors().size(); ++i) {
        if ((*remote)->tensors()[i].name != "ext_a")
            continue;
        auto bytes = (*remote)->read(i);
        QVERIFY(!bytes);
        QVERIFY2(bytes.error().is(ErrorKind::Changed), bytes.error().message.c_str());
        return;
    }
    QFAIL("no ext_a");
}

void TestRemoteModel::theCliInspectsAndVerifiesAUrl()
{
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    fixtures::writeModelFile(
        fixtures::servedModel(nginx.www() / "m", true), nginx.www() / "m" / "model.onnx");
    QCOMPARE(nginx.start(), QString());
    const QString url = QString::fromStdString(nginx.url("m/model.onnx"));
    const QString path = QString::fromStdString((nginx.www() / "m" / "model.onnx").string());
    const auto remote = fixtures::runCli({"inspect", "--json", url});
    const auto local = fixtures::runCli({"inspect", "--json", path});
    QCOMPARE(remote.exitCode, 0);
    QCOMPARE(local.exitCode, 0);
    // The same document but for where the files are: URLs there, paths here.
    QByteArray remoteText = remote.out;
    remoteText.replace(
        url.left(url.lastIndexOf('/')).toUtf8(), path.left(path.lastIndexOf('/')).toUtf8());
    QCOMPARE(remoteText, local.out);
    const auto table = fixtures::runCli({"inspect", url});
    QCOMPARE(table.exitCode, 0);
    QVERIFY2(
        table.out.startsWith("Model " + url.toUtf8() + "  (IR"), table.out.left(200).constData());
    const auto verified = fixtures::runCli({"verify", url});
    QCOMPARE(verified.exitCode, 0);
    QVERIFY(verified.out.contains("ok, "));
    const auto folder = fixtures::runCli({"inspect", url.left(url.lastIndexOf('/') + 1)});
    QCOMPARE(folder.exitCode, 2);
    QVERIFY2(folder.err.contains("name the .onnx file"), folder.err.constData());
}

// Flips one byte of `path` at `offset`.
void flipByte(const fs::path& path, uint64_t offset)
{
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(static_cast<std::streamoff>(offset));
    const char c = static_cast<char>(file.get() ^ 0x5a);
    file.seekp(static_cast<std::streamoff>(offset));
    file.put(c);
}

void TestRemoteModel::theCliDiffsAUrlAgainstALocalCopy()
{
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    fixtures::writeModelFile(
        fixtures::servedModel(nginx.www() / "m", true), nginx.www() / "m" / "model.onnx");
    const QString why = nginx.start();
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QTemporaryDir copy;
    fs::copy(nginx.www() / "m", copy.path().toStdString(), fs::copy_options::recursive);
    const QString url = QString::fromStdString(nginx.url("m/model.onnx"));
    const QString served = QString::fromStdString((nginx.www() / "m" / "model.onnx").string());
    const QString local = copy.filePath("model.onnx");
    // The same JSON as two local files give, but for the versions of the server's files read
    // (tst_remote_versions), and no change.
    const auto remote = fixtures::runCli({"diff", "--json", "--exit-code", url, local});
    QVERIFY2(remote.exitCode == 0, (remote.out + remote.err).constData());
    const auto onDisk = fixtures::runCli({"diff", "--json", "--exit-code", served, local});
    QCOMPARE(onDisk.exitCode, 0);
    QJsonObject remoteJson = QJsonDocument::fromJson(remote.out).object();
    QJsonObject onDiskJson = QJsonDocument::fromJson(onDisk.out).object();
    QCOMPARE(remoteJson.take("sources").toArray().size(), 2);
    QCOMPARE(onDiskJson.take("sources").toArray().size(), 0);
    QCOMPARE(remoteJson, onDiskJson);
    // One byte of ext_a changed in the copy: the server's bytes were read and compared.
    flipByte(copy.filePath("w.bin").toStdString(), 1000);
    const auto changed = fixtures::runCli({"diff", "--exit-code", url, local});
    QCOMPARE(changed.exitCode, 1);
    QVERIFY2(changed.out.contains("content_changed  graph/ext_a"), changed.out.constData());
    QVERIFY2(!changed.out.contains("ext_b"), changed.out.constData());
}

void TestRemoteModel::twoServedFilesOfOneSizeAreCompared()
{
    // A remote file's identity is its address and version, not its size: two data files on the
    // server of one size, one byte apart, are read and found different.
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    fixtures::writeModelFile(
        fixtures::servedModel(nginx.www() / "a", true), nginx.www() / "a" / "model.onnx");
    fs::copy(nginx.www() / "a", nginx.www() / "b", fs::copy_options::recursive);
    flipByte(nginx.www() / "b" / "w.bin", 1000);
    const QString why = nginx.start();
    QVERIFY2(why.isEmpty(), qPrintable(why));
    const auto run = fixtures::runCli(
        {"diff", "--exit-code", QString::fromStdString(nginx.url("a/model.onnx")),
            QString::fromStdString(nginx.url("b/model.onnx"))});
    QVERIFY2(run.exitCode == 1, (run.out + run.err).constData());
    QVERIFY2(run.out.contains("ext_a"), (run.out + run.err).constData());
}

void TestRemoteModel::aFileThatIsNoModelIsRefusedAtItsFirstBlock_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("found"); // what the message says the file begins with
    std::mt19937 random(1);
    QByteArray noise(16 << 20, Qt::Uninitialized);
    for (char& c : noise)
        c = static_cast<char>(random());
    QTest::addRow("16 MiB of random bytes") << noise << "it begins 25 eb 8c 48";
    QByteArray page = "<!DOCTYPE html>\n<html><head><title>Not Found</title></head>\n";
    while (page.size() < (4 << 20))
        page += "<p>The requested URL was not found on this server.</p>\n";
    QTest::addRow("an error page answered with 200") << page << "it begins \"<!DOCTYPE html>";
    QTest::addRow("gzip") << QByteArray("\x1f\x8b\x08\x00", 4) + noise.left(8 << 20) << "(gzip)";
    QTest::addRow("zeros") << QByteArray(8 << 20, '\0') << "field number 0 at byte 0";
}

// What the issue found: `inspect URL` of a 256 MiB file of random bytes fetched all of it (and
// held it twice in memory) before saying it was no model. Now the first block tells, as the
// same file on disk tells at its first bytes.
void TestRemoteModel::aFileThatIsNoModelIsRefusedAtItsFirstBlock()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, found);
    fixtures::NginxFixture nginx;
    SKIP_WITHOUT_NGINX();
    fs::create_directories(nginx.www() / "m");
    std::ofstream(nginx.www() / "m" / "model.onnx", std::ios::binary)
        .write(bytes.constData(), bytes.size());
    const QString why = nginx.start();
    QVERIFY2(why.isEmpty(), qPrintable(why));
    const std::string url = nginx.url("m/model.onnx");
    BlockCache cache;
    auto model = openHttpModel(url, &cache);
    // One request, of the block that opened the file.
    QVERIFY2(cache.stats().fetchedBytes <= BlockCache::kBlockBytes,
        std::to_string(cache.stats().fetchedBytes).c_str());
    QCOMPARE(nginx.requests(), std::vector<std::string>{"GET /m/model.onnx"});
    QVERIFY(!model);
    QVERIFY2(model.error().is(ErrorKind::Format), model.error().message.c_str());
    const QString message = QString::fromStdString(model.error().message);
    QVERIFY2(message.startsWith(QString::fromStdString(url) + ": not an ONNX model ("),
        qPrintable(message));
    QVERIFY2(message.contains(found), qPrintable(message));
    const auto run = fixtures::runCli({"inspect", QString::fromStdString(url)});
    QCOMPARE(run.exitCode, 1);
    QCOMPARE(run.errLines().size(), 1);
    QVERIFY2(run.err.contains(": not an ONNX model ("), run.err.constData());
}

QTEST_GUILESS_MAIN(TestRemoteModel)
#include "tst_remote_model.moc"
