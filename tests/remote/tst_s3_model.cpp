// A model in S3 (issue 38), served by an S3 server on 127.0.0.1 that checks every request's
// signature (tests/support/s3rver_fixture.h): `inspect` and `verify` of s3://BUCKET/KEY give what
// they give for the same files on disk, whether the keys come from the environment, with a
// session token, from the credentials profile or are absent (unsigned requests); a wrong secret
// is refused with a message that says so and never shows it; a missing object or bucket is
// NotFound naming its s3:// name; the signature and the keys go to the endpoint's origin only;
// an object replaced after a repack read it, before its commit point, fails the repack as
// `changed` with nothing written.
#include "core/io/source_spec.h"
#include "core/remote/s3_source.h"
#include "core/save/save.h"
#include "tests/support/cli_run.h"
#include "tests/support/fault_server.h"
#include "tests/support/map_environment.h"
#include "tests/support/model_builder.h"
#include "tests/support/replacing_server.h"
#include "tests/support/result_checks.h"
#include "tests/support/s3rver_fixture.h"
#include "tests/support/tensor_builder.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>

using namespace repack;
using fixtures::S3rverFixture;
namespace fs = std::filesystem;

namespace {

const char* const kBucket = "models";
using Variables = QMap<QString, QString>; // environment variables

// m/model.onnx with a 1 MiB inline weight, a small one, and two tensors in m/w.bin, written to
// `dir`.
void writeModelFiles(const fs::path& dir)
{
    onnx::ModelProto model = fixtures::emptyModel();
    onnx::GraphProto& graph = *model.mutable_graph();
    *graph.add_initializer() = fixtures::rawTensor("big", onnx::TensorProto::FLOAT, {512, 512});
    *graph.add_initializer() = fixtures::rawTensor("small", onnx::TensorProto::FLOAT, {8});
    const std::string data = fixtures::patternBytes(200000, 3);
    for (const auto& [name, offset, length] :
        {std::tuple{"ext_a", 0, 160000}, std::tuple{"ext_b", 160000, 40000}}) {
        onnx::TensorProto tensor
            = fixtures::rawTensor(name, onnx::TensorProto::FLOAT, {length / 4});
        tensor.clear_raw_data();
        fixtures::setExternal(tensor, "w.bin", std::to_string(offset), std::to_string(length));
        *graph.add_initializer() = tensor;
    }
    fs::create_directories(dir / "m");
    std::ofstream(dir / "m" / "w.bin", std::ios::binary) << data;
    std::ofstream out(dir / "m" / "model.onnx", std::ios::binary);
    model.SerializeToOstream(&out);
}

// writeModelFiles' files, uploaded to `server` (only the model without `withData`).
QString writeAndUpload(const S3rverFixture& server, const fs::path& dir, bool withData)
{
    writeModelFiles(dir);
    if (const QString why = server.put("m/model.onnx", dir / "m" / "model.onnx"); !why.isEmpty())
        return why;
    return withData ? server.put("m/w.bin", dir / "m" / "w.bin") : QString();
}

// The environment of a CLI run against the S3 server at `endpoint`: that endpoint, the given
// keys and nothing of the suite's own AWS settings (an empty variable counts as unset).
Variables s3Environment(
    const std::string& endpoint, const QString& profileFile, const Variables& keys)
{
    Variables env{{"AWS_ENDPOINT_URL", QString::fromStdString(endpoint)},
        {"AWS_ENDPOINT_URL_S3", ""}, {"AWS_REGION", "us-east-1"}, {"AWS_ACCESS_KEY_ID", ""},
        {"AWS_SECRET_ACCESS_KEY", ""}, {"AWS_SESSION_TOKEN", ""}, {"AWS_PROFILE", ""},
        {"AWS_SHARED_CREDENTIALS_FILE", profileFile}};
    for (auto it = keys.begin(); it != keys.end(); ++it)
        env.insert(it.key(), it.value());
    return env;
}

// The credentials file holding `text` in `dir` (none when `text` is empty): its path.
QString writeProfile(const QTemporaryDir& dir, const QString& text)
{
    const QString path = dir.path() + QStringLiteral("/credentials");
    if (!text.isEmpty())
        std::ofstream(path.toStdString()) << text.toStdString();
    return path;
}

// The same as a repack::Environment, for the library's own calls.
Environment environmentOf(const Variables& env)
{
    std::map<std::string, std::string> values;
    for (auto it = env.begin(); it != env.end(); ++it)
        values[it.key().toStdString()] = it.value().toStdString();
    return fixtures::mapEnvironment(std::move(values));
}

SourceSpec specOf(const std::string& text)
{
    auto spec = parseSource(text);
    return spec ? *spec : SourceSpec{};
}

// Starts `server` with the model of writeAndUpload, or skips the test when there is no server.
#define START_S3RVER(server, dir, withData)                                                        \
    do {                                                                                           \
        if (const QString why = S3rverFixture::unavailable(); !why.isEmpty())                      \
            QSKIP(qPrintable(why + QStringLiteral(": S3 tests skipped")));                         \
        QCOMPARE((server).start(kBucket), QString());                                              \
        QCOMPARE(writeAndUpload((server), (dir), (withData)), QString());                          \
    } while (false)

} // namespace

class TestS3Model : public QObject {
    Q_OBJECT
private slots:
    void theCliInspectsAndVerifiesAnObject_data();
    void theCliInspectsAndVerifiesAnObject();
    void aRefusedSignatureIsAClearError_data();
    void aRefusedSignatureIsAClearError();
    void aMissingObjectOrBucketIsNotFound_data();
    void aMissingObjectOrBucketIsNotFound();
    void aMissingDataFileIsAProblemNamingIt();
    void theSignatureGoesToTheEndpointOnly();
    void anObjectReplacedAfterItWasReadIsChangedAndNothingIsWritten_data();
    void anObjectReplacedAfterItWasReadIsChangedAndNothingIsWritten();
    void anObjectUploadedAgainOnceTheSaveCopiedItIsChanged_data();
    void anObjectUploadedAgainOnceTheSaveCopiedItIsChanged();
};

void TestS3Model::theCliInspectsAndVerifiesAnObject_data()
{
    QTest::addColumn<Variables>("keys");
    QTest::addColumn<QString>("profile"); // the credentials file's text, "" for none
    QTest::addColumn<QString>("folder"); // of the model's key
    const Variables keys{{"AWS_ACCESS_KEY_ID", S3rverFixture::kAccessKey},
        {"AWS_SECRET_ACCESS_KEY", S3rverFixture::kSecretKey}};
    QTest::addRow("keys from the environment") << keys << QString() << "m";
    // Written %20, %2B and %C3%A9 in the URL, as signed: the server checks the same path.
    QTest::addRow("a key with a space, '+' and a non-ASCII letter")
        << keys << QString() << QStringLiteral("a b+c\u00e9");
    QTest::addRow("keys and a session token")
        << Variables{{"AWS_ACCESS_KEY_ID", S3rverFixture::kAccessKey},
               {"AWS_SECRET_ACCESS_KEY", S3rverFixture::kSecretKey},
               {"AWS_SESSION_TOKEN", "session-token-1"}}
        << QString() << "m";
    QTest::addRow("keys of the credentials profile")
        << Variables{{"AWS_PROFILE", "tests"}}
        << QStringLiteral("[default]\naws_access_key_id = nobody\naws_secret_access_key = no\n"
                          "[tests]\naws_access_key_id = %1\naws_secret_access_key = %2\n")
               .arg(S3rverFixture::kAccessKey, S3rverFixture::kSecretKey)
        << "m";
    QTest::addRow("no keys: unsigned requests") << Variables{} << QString() << "m";
}

void TestS3Model::theCliInspectsAndVerifiesAnObject()
{
    QFETCH(Variables, keys);
    QFETCH(QString, profile);
    QFETCH(QString, folder);
    S3rverFixture server;
    QTemporaryDir dir;
    const fs::path local(dir.path().toStdString());
    START_S3RVER(server, local, true);
    for (const char* file : {"model.onnx", "w.bin"})
        if (folder != "m")
            QCOMPARE(server.put(folder.toStdString() + "/" + file, local / "m" / file), QString());
    const fixtures::CliOptions options{
        s3Environment(server.endpoint(), writeProfile(dir, profile), keys)};
    const QString name = "s3://models/" + folder + "/model.onnx";
    const QString path = QString::fromStdString((local / "m" / "model.onnx").string());

    const auto remote = fixtures::runCli({"inspect", "--json", name}, options);
    const auto onDisk = fixtures::runCli({"inspect", "--json", path});
    QVERIFY2(remote.exitCode == 0, remote.err.constData());
    QCOMPARE(onDisk.exitCode, 0);
    // The same document but for where the files are: s3:// names there, paths here.
    QByteArray remoteText = remote.out;
    remoteText.replace(("s3://models/" + folder).toUtf8(), (dir.path() + "/m").toUtf8());
    QCOMPARE(remoteText, onDisk.out);
    QVERIFY(remote.out.contains("\"path\": \"" + name.toUtf8() + "\""));

    const auto table = fixtures::runCli({"inspect", name}, options);
    QCOMPARE(table.exitCode, 0);
    QVERIFY2(table.out.startsWith("Model " + name.toUtf8() + "  (IR"), table.out.constData());
    const auto verified = fixtures::runCli({"verify", name}, options);
    QVERIFY2(verified.exitCode == 0, verified.err.constData());
    QVERIFY2(verified.out.contains(name.toUtf8() + ": ok, 4 tensors verified"),
        verified.out.constData());
}

void TestS3Model::aRefusedSignatureIsAClearError_data()
{
    QTest::addColumn<Variables>("keys");
    QTest::addColumn<QString>("profile"); // the credentials file's text, "" for none
    QTest::addColumn<QString>("secret"); // what no message may show
    QTest::addRow("a wrong secret") << Variables{{"AWS_ACCESS_KEY_ID", S3rverFixture::kAccessKey},
        {"AWS_SECRET_ACCESS_KEY", "wrong-secret-4711"}}
                                    << QString() << "wrong-secret-4711";
    QTest::addRow("an unknown access key") << Variables{{"AWS_ACCESS_KEY_ID", "UNKNOWN4711"},
        {"AWS_SECRET_ACCESS_KEY", S3rverFixture::kSecretKey}}
                                           << QString() << S3rverFixture::kSecretKey;
    QTest::addRow("a wrong secret in the profile")
        << Variables{}
        << QStringLiteral("[default]\naws_access_key_id = %1\naws_secret_access_key = bad-4711\n")
               .arg(S3rverFixture::kAccessKey)
        << "bad-4711";
}

void TestS3Model::aRefusedSignatureIsAClearError()
{
    QFETCH(Variables, keys);
    QFETCH(QString, profile);
    QFETCH(QString, secret);
    S3rverFixture server;
    QTemporaryDir dir;
    START_S3RVER(server, fs::path(dir.path().toStdString()), true);
    const auto env = s3Environment(server.endpoint(), writeProfile(dir, profile), keys);
    const std::string refused = "s3://models/m/model.onnx: HTTP 403 to GET: the server refused "
                                "the request's signature or credentials";

    const auto opened = openS3Model(specOf("s3://models/m/model.onnx"), environmentOf(env));
    QVERIFY_FAILS_WITH(opened, refused);
    QCOMPARE(opened.error().kind, ErrorKind::Io); // as an HTTP 403 of a web server
    QVERIFY(opened.error().message.find(secret.toStdString()) == std::string::npos);

    const auto run = fixtures::runCli({"inspect", "--json", "s3://models/m/model.onnx"}, {env});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(QByteArray::fromStdString(refused)), run.err.constData());
    QVERIFY(!run.err.contains(secret.toUtf8()) && !run.out.contains(secret.toUtf8()));
}

void TestS3Model::aMissingObjectOrBucketIsNotFound_data()
{
    QTest::addColumn<QString>("name");
    QTest::addRow("a missing key") << "s3://models/m/other.onnx";
    QTest::addRow("a missing bucket") << "s3://no-such-bucket/m/model.onnx";
}

void TestS3Model::aMissingObjectOrBucketIsNotFound()
{
    QFETCH(QString, name);
    S3rverFixture server;
    QTemporaryDir dir;
    START_S3RVER(server, fs::path(dir.path().toStdString()), true);
    const auto env = s3Environment(server.endpoint(), {},
        {{"AWS_ACCESS_KEY_ID", S3rverFixture::kAccessKey},
            {"AWS_SECRET_ACCESS_KEY", S3rverFixture::kSecretKey}});

    const auto opened = openS3Model(specOf(name.toStdString()), environmentOf(env));
    QVERIFY_FAILS_WITH(opened, name.toStdString() + ": not on the server (HTTP 404)");
    QCOMPARE(opened.error().kind, ErrorKind::NotFound);

    const auto run = fixtures::runCli({"verify", name}, {env});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(name.toUtf8() + ": not on the server"), run.err.constData());
}

void TestS3Model::aMissingDataFileIsAProblemNamingIt()
{
    S3rverFixture server;
    QTemporaryDir dir;
    START_S3RVER(server, fs::path(dir.path().toStdString()), false);
    const auto opened = openS3Model(specOf("s3://models/m/model.onnx"),
        environmentOf(s3Environment(server.endpoint(), {}, {})));
    QVERIFY_OK(opened);
    bool missing = false;
    for (const Problem& p : (*opened)->problems())
        missing |= p.code == "missing-file"
            && p.message.find("s3://models/m/w.bin") != std::string::npos;
    QVERIFY(missing);
}

void TestS3Model::theSignatureGoesToTheEndpointOnly()
{
    // The endpoint redirects to another port: another origin, which must see no signature.
    fixtures::FaultServer elsewhere([](int socket, const fixtures::FaultRequest&, int) {
        fixtures::FaultServer::respond(socket, "200 OK", {"Content-Length: 10"}, {});
    });
    fixtures::FaultServer endpoint([&](int socket, const fixtures::FaultRequest&, int) {
        fixtures::FaultServer::respond(
            socket, "307 Temporary Redirect", {"Location: " + elsewhere.url("m.onnx")}, {});
    });
    S3Settings s3 = s3Settings(fixtures::mapEnvironment(
        {{"AWS_ENDPOINT_URL", endpoint.url("")}, {"AWS_ACCESS_KEY_ID", "AKEY"},
            {"AWS_SECRET_ACCESS_KEY", "a-secret"}, {"AWS_SESSION_TOKEN", "a-token"}}));
    const SourceSpec spec = specOf("s3://bucket/m.onnx");
    HttpTransport transport(s3HttpOptions(s3, spec));
    const auto file = transport.stat(s3ObjectUrl(s3, spec));
    QVERIFY_OK(file);
    QCOMPARE(file->display(), std::string("s3://bucket/m.onnx"));

    const auto asked = endpoint.requests();
    QCOMPARE(asked.size(), size_t(1));
    QCOMPARE(asked[0].target, std::string("/bucket/m.onnx"));
    QVERIFY2(asked[0].header("authorization").starts_with("AWS4-HMAC-SHA256 Credential=AKEY/"),
        asked[0].header("authorization").c_str());
    QCOMPARE(asked[0].header("x-amz-content-sha256"), std::string("UNSIGNED-PAYLOAD"));
    QCOMPARE(asked[0].header("x-amz-security-token"), std::string("a-token"));
    const auto served = elsewhere.requests();
    QCOMPARE(served.size(), size_t(1));
    for (const char* header :
        {"authorization", "x-amz-content-sha256", "x-amz-security-token", "x-amz-date"})
        QCOMPARE(served[0].header(header), std::string());
    for (const auto& request : {asked[0], served[0]})
        for (const auto& [header, value] : request.headers)
            QVERIFY2(value.find("a-secret") == std::string::npos, header.c_str());
}

void TestS3Model::anObjectReplacedAfterItWasReadIsChangedAndNothingIsWritten_data()
{
    QTest::addColumn<QString>("file");
    QTest::addRow("the .onnx") << "model.onnx";
    QTest::addRow("a data file") << "w.bin";
}

// The object is replaced after the repack read its last byte and before the commit point (an
// S3 endpoint that says so, tests/support/replacing_server.h): exit `changed`, the object
// named, nothing at OUT.
void TestS3Model::anObjectReplacedAfterItWasReadIsChangedAndNothingIsWritten()
{
    QFETCH(QString, file);
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeModelFiles(root / "files");
    fixtures::ReplacingServer server(root / "files", kBucket, "m/" + file.toStdString());
    fs::create_directories(root / "out");
    const auto run
        = fixtures::runCli({"repack", "s3://models/m/model.onnx", "-o",
                               QString::fromStdString((root / "out" / "model.onnx").string())},
            {s3Environment(server.endpoint(), writeProfile(dir, {}),
                {{"AWS_ACCESS_KEY_ID", S3rverFixture::kAccessKey},
                    {"AWS_SECRET_ACCESS_KEY", S3rverFixture::kSecretKey}})});
    QCOMPARE(run.exitCode, kindInfo(ErrorKind::Changed).exitCode);
    QVERIFY(server.replaced());
    QVERIFY2(run.err.contains("s3://models/m/" + file.toUtf8() + ": changed on the server"),
        run.err.constData());
    QVERIFY(fs::is_empty(root / "out"));
}

void TestS3Model::anObjectUploadedAgainOnceTheSaveCopiedItIsChanged_data()
{
    QTest::addColumn<QString>("file");
    QTest::addRow("the .onnx") << "model.onnx";
    QTest::addRow("a data file") << "w.bin";
}

// The same against the S3 server: the object is uploaded again (one byte changed) once the save
// has copied every byte. The save fails as Changed and writes nothing.
void TestS3Model::anObjectUploadedAgainOnceTheSaveCopiedItIsChanged()
{
    QFETCH(QString, file);
    S3rverFixture server;
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    START_S3RVER(server, root, true);
    auto opened = openS3Model(specOf("s3://models/m/model.onnx"),
        environmentOf(s3Environment(server.endpoint(), writeProfile(dir, {}),
            {{"AWS_ACCESS_KEY_ID", S3rverFixture::kAccessKey},
                {"AWS_SECRET_ACCESS_KEY", S3rverFixture::kSecretKey}})));
    QVERIFY_OK(opened);
    const std::string key = "m/" + file.toStdString();
    QString uploaded = "not uploaded";
    SaveOptions options;
    options.progress = [&](const Progress& p) {
        if (p.bytesDone < p.bytesTotal || uploaded != "not uploaded")
            return;
        std::fstream bytes(root / key, std::ios::binary | std::ios::in | std::ios::out);
        bytes.seekg(100);
        const char byte = static_cast<char>(bytes.get() ^ 1);
        bytes.seekp(100);
        bytes.put(byte);
        bytes.close();
        uploaded = server.put(key, root / key);
    };
    fs::create_directories(root / "out");
    auto saved = save(**opened, root / "out" / "model.onnx", options);
    QCOMPARE(uploaded, QString());
    QVERIFY_FAILS_WITH(saved, "s3://models/" + key + ": changed on the server");
    QCOMPARE(saved.error().kind, ErrorKind::Changed);
    QVERIFY(fs::is_empty(root / "out"));
}

QTEST_GUILESS_MAIN(TestS3Model)
#include "tst_s3_model.moc"
