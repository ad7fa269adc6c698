// The onnx-repack executable as users run it ($REPACK_CLI): exit codes 0/1/2, one-line
// reasons on stderr naming the file, and `inspect --json` following SPEC section 6.
#include "tests/support/cli_run.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/model_builder.h"
#include "tests/support/tensor_builder.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace fixtures;

namespace {

using Run = fixtures::CliRun;
using fixtures::runCli;

} // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void usageError_data();
    void usageError();
    void unusableFile_data();
    void unusableFile();
    void inspectJsonSchema();
    void verifyReportsEveryProblem();
    void verifyHealthyModel();

private:
    QTemporaryDir m_dir;
    QString m_model; // healthy: inline, two aligned externals, one unknown-key warning
    QString m_broken; // two errors: missing data file, checksum mismatch
};

void TestCli::initTestCase()
{
    QVERIFY2(QFileInfo(qEnvironmentVariable("REPACK_CLI")).isExecutable(),
        "REPACK_CLI must name the onnx-repack binary");
    QVERIFY(m_dir.isValid());

    onnx::ModelProto model = emptyModel();
    DataFileBuilder data("m.onnx.data");
    *model.mutable_graph()->add_initializer() = rawTensor("w_inline", 1, {2, 2});
    auto ext = rawTensor("w_ext", 1, {4});
    data.append(ext, 4096);
    auto ext2 = rawTensor("w_ext2", 1, {2, 2});
    data.append(ext2, 4096); // offset 4096: 4080 bytes of zero padding before it
    addExternalKey(ext2, "compression", "none");
    *model.mutable_graph()->add_initializer() = ext;
    *model.mutable_graph()->add_initializer() = ext2;
    QVERIFY(data.save(m_dir.path()));
    m_model = m_dir.filePath("m.onnx");
    QVERIFY(saveModel(model, m_model));

    onnx::ModelProto broken = emptyModel();
    DataFileBuilder brokenData("b.onnx.data");
    auto gone = rawTensor("gone", 1, {4});
    brokenData.append(gone);
    setExternal(gone, "nowhere.bin", "0", "16");
    auto bad = rawTensor("bad", 1, {4});
    brokenData.append(bad);
    addExternalKey(bad, "checksum", std::string(40, '0'));
    *broken.mutable_graph()->add_initializer() = gone;
    *broken.mutable_graph()->add_initializer() = bad;
    QVERIFY(brokenData.save(m_dir.path()));
    m_broken = m_dir.filePath("b.onnx");
    QVERIFY(saveModel(broken, m_broken));
}

void TestCli::usageError_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::newRow("no subcommand") << QStringList{};
    QTest::newRow("unknown subcommand") << QStringList{"frobnicate"};
    QTest::newRow("inspect without MODEL") << QStringList{"inspect"};
    QTest::newRow("unknown option") << QStringList{"inspect", "x.onnx", "--bogus"};
    QTest::newRow("verify with two models") << QStringList{"verify", "a.onnx", "b.onnx"};
}

void TestCli::usageError()
{
    QFETCH(QStringList, args);
    const Run run = runCli(args);
    QCOMPARE(run.exitCode, 2);
    QVERIFY(run.out.isEmpty());
    const QStringList lines = run.errLines();
    QVERIFY2(!lines.isEmpty() && lines.size() <= 3, run.err.constData());
    QVERIFY2(run.err.contains("usage"), run.err.constData());
}

void TestCli::unusableFile_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("file"); // under the temporary dir
    QTest::addColumn<QByteArray>("contents"); // empty: the file is not created

    const QByteArray text = "this is a README, not an ONNX model\n";
    QTest::newRow("inspect missing file") << "inspect"
                                          << "missing.onnx" << QByteArray();
    QTest::newRow("verify missing file") << "verify"
                                         << "missing.onnx" << QByteArray();
    QTest::newRow("inspect text file") << "inspect"
                                       << "README.onnx" << text;
    QTest::newRow("verify text file") << "verify"
                                      << "README.onnx" << text;
    QTest::newRow("inspect binary junk") << "inspect"
                                         << "junk.onnx" << QByteArray(64, '\xff');
}

void TestCli::unusableFile()
{
    QFETCH(QString, command);
    QFETCH(QString, file);
    QFETCH(QByteArray, contents);

    QTemporaryDir dir;
    const QString path = dir.filePath(file);
    if (!contents.isEmpty()) {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(contents);
    }
    const Run run = runCli({command, path});
    QCOMPARE(run.exitCode, 1);
    const QStringList lines = run.errLines();
    QCOMPARE(lines.size(), 1);
    QVERIFY2(lines[0].contains(path), run.err.constData());
}

void TestCli::inspectJsonSchema()
{
    const Run run = runCli({"inspect", m_model, "--json"});
    QCOMPARE(run.exitCode, 0);
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(run.out, &error);
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
    const QJsonObject root = doc.object();
    QCOMPARE(root.keys().size(), 6);
    QCOMPARE(root["schema"].toString(), QString("onnx-repack/inspect/1"));

    const QJsonObject model = root["model"].toObject();
    for (const char* key : {"path", "bytes", "ir_version", "producer", "opsets"})
        QVERIFY2(model.contains(key), key);
    QVERIFY(model["path"].toString().endsWith("/m.onnx"));
    QCOMPARE(model["bytes"].toInteger(), QFileInfo(m_model).size());
    QCOMPARE(model["ir_version"].toInteger(), 8);
    QCOMPARE(model["producer"].toString(), QString("repack-fixtures 1"));
    QCOMPARE(model["opsets"].toObject()["ai.onnx"].toInteger(), 17);

    const QJsonArray tensors = root["tensors"].toArray();
    QCOMPARE(tensors.size(), 3);
    const QStringList names{"w_inline", "w_ext", "w_ext2"};
    const QList<qint64> offsets{-1, 0, 4096};
    for (int i = 0; i < 3; ++i) {
        const QJsonObject t = tensors[i].toObject();
        for (const char* key : {"name", "scope", "kind", "dtype", "shape", "elements", "bytes",
                 "storage", "location", "offset", "length"})
            QVERIFY2(t.contains(key), key);
        QCOMPARE(t["name"].toString(), names[i]);
        QCOMPARE(t["scope"].toString(), QString("graph"));
        QCOMPARE(t["kind"].toString(), QString("initializer"));
        QCOMPARE(t["dtype"].toString(), QString("float"));
        QVERIFY(t["shape"].isArray());
        QCOMPARE(t["elements"].toInteger(), 4);
        QCOMPARE(t["bytes"].toInteger(), 16);
        const bool external = i > 0;
        QCOMPARE(t["storage"].toString(), QString(external ? "external" : "inline"));
        if (external) {
            QCOMPARE(t["location"].toString(), QString("m.onnx.data"));
            QCOMPARE(t["offset"].toInteger(), offsets[i]);
            QCOMPARE(t["length"].toInteger(), 16);
        } else {
            QVERIFY(t["location"].isNull() && t["offset"].isNull() && t["length"].isNull());
        }
    }
    QCOMPARE(tensors[0].toObject()["shape"].toArray(), (QJsonArray{2, 2}));

    const QJsonArray files = root["files"].toArray();
    QCOMPARE(files.size(), 1);
    const QJsonObject f = files[0].toObject();
    QCOMPARE(f["location"].toString(), QString("m.onnx.data"));
    QCOMPARE(f["bytes"].toInteger(), 4096 + 16);
    QCOMPARE(f["referenced_bytes"].toInteger(), 32);
    QCOMPARE(f["padding_bytes"].toInteger(), 4096 - 16);
    QCOMPARE(f["orphaned_bytes"].toInteger(), 0);
    QCOMPARE(f["overlapping_bytes"].toInteger(), 0);

    const QJsonObject totals = root["totals"].toObject();
    QCOMPARE(totals["tensors"].toInteger(), 3);
    QCOMPARE(totals["inline_bytes"].toInteger(), 16);
    QCOMPARE(totals["external_bytes"].toInteger(), 32);

    const QJsonArray problems = root["problems"].toArray();
    QCOMPARE(problems.size(), 1);
    const QJsonObject p = problems[0].toObject();
    QCOMPARE(p["severity"].toString(), QString("warning"));
    QCOMPARE(p["tensor"].toString(), QString("graph/w_ext2"));
    QCOMPARE(p["code"].toString(), QString("unknown-key"));
    QVERIFY(p["message"].isString() && !p["message"].toString().isEmpty());
}

void TestCli::verifyReportsEveryProblem()
{
    const Run run = runCli({"verify", m_broken});
    QCOMPARE(run.exitCode, 1);
    const QStringList lines = run.errLines();
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines.filter("missing-file").size() == 1 && lines.filter("graph/gone").size() == 1,
        run.err.constData());
    QVERIFY2(lines.filter("checksum-mismatch").size() == 1 && lines.filter("graph/bad").size() == 1,
        run.err.constData());
    for (const QString& line : lines)
        QVERIFY2(line.contains(m_broken), qPrintable(line));
}

void TestCli::verifyHealthyModel()
{
    const Run run = runCli({"verify", m_model});
    QCOMPARE(run.exitCode, 0); // the unknown key is a warning only
    const Run json = runCli({"verify", m_model, "--json"});
    QCOMPARE(json.exitCode, 0);
    const QJsonObject root = QJsonDocument::fromJson(json.out).object();
    QCOMPARE(root["schema"].toString(), QString("onnx-repack/verify/1"));
    QCOMPARE(root["ok"].toBool(), true);
}

QTEST_APPLESS_MAIN(TestCli)
#include "tst_cli.moc"
