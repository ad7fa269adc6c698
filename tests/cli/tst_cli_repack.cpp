// `onnx-repack repack` as users run it ($REPACK_CLI): every option of SPEC section 6, exit
// codes 0/1/2 with reasons on stderr, and the `diff --json` schema. Outputs are checked by
// loading them with the core and comparing bytes with what the fixture wrote.
#include "core/format.h"
#include "core/model/model.h"
#include "tests/support/cli_run.h"
#include "tests/support/model_builder.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QTest>

#include <onnx/onnx_pb.h>

using namespace repack;
using namespace fixtures;

namespace {

// t0 1000 B, t1 2048 B, t2 2500 B, t3 1 MiB, t4 1 MiB - 1, all inline.
const std::vector<uint64_t> kSizes{1000, 2048, 2500, 1 << 20, (1 << 20) - 1};

using Run = fixtures::CliRun;

// The CLI with the fault point `failAt` armed (none when empty).
Run runCli(const QStringList& args, const QString& failAt)
{
    fixtures::CliOptions options;
    if (!failAt.isEmpty())
        options.env.insert("ONNX_REPACK_FAIL_AT", failAt);
    return fixtures::runCli(args, options);
}

// "plain": kSizes inline; "external": the same with >= 1024 bytes in src.data;
// "attribute": plain plus a Constant whose 4096-byte value tensor is named "c".
QString writeFixture(const QString& dir, const QString& kind)
{
    if (kind == "external")
        return writeUint8Model(dir, "in.onnx", kSizes, 1024, "src.data");
    const QString path = writeUint8Model(dir, "in.onnx", kSizes, ~0ull, "unused");
    if (kind != "attribute")
        return path;
    auto proto = std::make_unique<onnx::ModelProto>();
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly) || !proto->ParseFromString(file.readAll().toStdString()))
        return {};
    addConstant(*proto->mutable_graph(), "c", rawTensor("c", 2, {4096}, tensorContent(9, 4096)));
    return saveModel(*proto, path) ? path : QString();
}

// Everything in `dir` and below: file hashes by relative path, folders as "<dir>".
QMap<QString, QByteArray> snapshot(const QString& dir)
{
    QMap<QString, QByteArray> all;
    const QMap<QString, QByteArray> files = hashFolder(dir);
    for (auto it = files.begin(); it != files.end(); ++it)
        all.insert(it.key(), it.value());
    for (const QString& sub :
        QDir(dir).entryList(QDir::Dirs | QDir::Hidden | QDir::NoDotAndDotDot)) {
        all.insert(sub, "<dir>");
        const QMap<QString, QByteArray> inner = snapshot(dir + "/" + sub);
        for (auto it = inner.begin(); it != inner.end(); ++it)
            all.insert(sub + "/" + it.key(), it.value());
    }
    return all;
}

QString sha1Hex(const std::string& bytes)
{
    return QCryptographicHash::hash(
        QByteArrayView(bytes.data(), qsizetype(bytes.size())), QCryptographicHash::Sha1)
        .toHex();
}

} // namespace

class TestCliRepack : public QObject {
    Q_OBJECT
private slots:
    void option_data();
    void option();
    void checksumOption();
    void forceOverwritesUnrelatedFile();
    void progressDrawsBarOnStderr();
    void costlyAlignmentSaysWhatItsPaddingTakes();
    void usageErrorExits2_data();
    void usageErrorExits2();
    void refusedOptionsWriteNothing_data();
    void refusedOptionsWriteNothing();
    void missingOutputFolderIsCreated_data();
    void missingOutputFolderIsCreated();
    void helpShowsTheCoreDefaults();
    void savedWithWarningSaysSo_data();
    void savedWithWarningSaysSo();
    void inPlaceSaveReportsUnusedDataFile_data();
    void inPlaceSaveReportsUnusedDataFile();
    void failureExitsNamingFile_data();
    void failureExitsNamingFile();
    void diffJsonSchema();
};

void TestCliRepack::option_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QStringList>("dataFiles"); // expected in the output folder
    QTest::addColumn<QString>("external"); // names of external tensors, in order
    QTest::addColumn<QString>("offsets"); // "name@offset ..." in tensor order, "": skip

    const QStringList data{"out.onnx.data"};
    // Offsets by hand: >= 1 MiB aligned to 4096, declaration order unless --order size.
    QTest::newRow("defaults") << "plain" << QStringList{} << data << "t1 t2 t3 t4"
                              << "t1@0 t2@2048 t3@8192 t4@1056768";
    QTest::newRow("--data") << "plain" << QStringList{"--data", "custom.bin"}
                            << QStringList{"custom.bin"} << "t1 t2 t3 t4"
                            << "";
    QTest::newRow("--threshold bytes")
        << "plain" << QStringList{"--threshold", "2500"} << data << "t2 t3 t4"
        << "";
    QTest::newRow("--threshold K") << "plain" << QStringList{"--threshold", "3K"} << data << "t3 t4"
                                   << "";
    QTest::newRow("--threshold KiB")
        << "plain" << QStringList{"--threshold", "2KiB"} << data << "t1 t2 t3 t4"
        << "";
    QTest::newRow("--threshold M") << "plain" << QStringList{"--threshold", "1M"} << data << "t3"
                                   << "t3@0";
    QTest::newRow("--threshold MiB")
        << "plain" << QStringList{"--threshold", "1MiB"} << data << "t3"
        << "";
    QTest::newRow("--align 0") << "plain" << QStringList{"--align", "0"} << data << "t1 t2 t3 t4"
                               << "t1@0 t2@2048 t3@4548 t4@1053124";
    QTest::newRow("--align 512 --align-threshold 2K")
        << "plain" << QStringList{"--align", "512", "--align-threshold", "2K"} << data
        << "t1 t2 t3 t4"
        << "t1@0 t2@2048 t3@4608 t4@1053184";
    QTest::newRow("--order size") << "plain" << QStringList{"--order", "size"} << data
                                  << "t1 t2 t3 t4"
                                  << "t1@0 t2@2048 t3@1056768 t4@4548";
    QTest::newRow("attributes by default")
        << "attribute" << QStringList{} << data << "t1 t2 t3 t4 c"
        << "";
    QTest::newRow("--no-attributes")
        << "attribute" << QStringList{"--no-attributes"} << data << "t1 t2 t3 t4"
        << "";
    QTest::newRow("--inline") << "external" << QStringList{"--inline"} << QStringList{} << ""
                              << "";
    // Accepted; what they change is proven by the core's suites (tst_safe_save and others).
    QTest::newRow("--allow-corrupt")
        << "external" << QStringList{"--allow-corrupt"} << data << "t1 t2 t3 t4"
        << "t1@0 t2@2048 t3@8192 t4@1056768";
    QTest::newRow("--remove-unused")
        << "external" << QStringList{"--remove-unused"} << data << "t1 t2 t3 t4"
        << "t1@0 t2@2048 t3@8192 t4@1056768";
    QTest::newRow("--wait 0") << "plain" << QStringList{"--wait", "0"} << data << "t1 t2 t3 t4"
                              << "";
    QTest::newRow("--wait 5") << "plain" << QStringList{"--wait", "5"} << data << "t1 t2 t3 t4"
                              << "";
    QTest::newRow("--wait 0.5") << "plain" << QStringList{"--wait", "0.5"} << data << "t1 t2 t3 t4"
                                << "";
    QTest::newRow("--wait inf") << "plain" << QStringList{"--wait", "inf"} << data << "t1 t2 t3 t4"
                                << "";
    // 1100 KiB: t1..t3 end at 1056768, t4 would pass 1126400 and starts shard two.
    QTest::newRow("--shard-size") << "plain" << QStringList{"--shard-size", "1100KiB"}
                                  << QStringList{"out-00001-of-00002.onnx.data",
                                         "out-00002-of-00002.onnx.data"}
                                  << "t1 t2 t3 t4"
                                  << "t1@0 t2@2048 t3@8192 t4@0";
}

void TestCliRepack::option()
{
    QFETCH(QString, fixture);
    QFETCH(QStringList, args);
    QFETCH(QStringList, dataFiles);
    QFETCH(QString, external);
    QFETCH(QString, offsets);

    QTemporaryDir dir;
    const QString in = writeFixture(dir.path(), fixture);
    QVERIFY(!in.isEmpty());
    QVERIFY(QDir(dir.path()).mkdir("out"));
    const QString out = dir.filePath("out/out.onnx");
    const Run run = runCli(QStringList{"repack", in, "-o", out} + args);
    QVERIFY2(run.exitCode == 0, run.err.constData());

    auto model = loadModel(out);
    QVERIFY(model);
    QVERIFY(!model->hasErrors());
    QStringList names, places;
    for (const auto& t : model->tensors()) {
        if (!t.isExternal())
            continue;
        names << QString::fromStdString(t.name);
        places << QString::fromStdString(t.name) + "@" + QString::number(t.external->offset);
    }
    QCOMPARE(names.join(' '), external);
    if (!offsets.isEmpty())
        QCOMPARE(places.join(' '), offsets);
    QStringList files = QDir(dir.filePath("out")).entryList(QDir::Files | QDir::Hidden);
    files.removeOne("out.onnx");
    QCOMPARE(files, dataFiles);

    const auto bytes = readAllTensors(*model);
    for (size_t i = 0; i < kSizes.size(); ++i)
        QCOMPARE(bytes.at("graph/" + tensorName(i)), tensorContent(i, kSizes[i]));
}

void TestCliRepack::checksumOption()
{
    QTemporaryDir dir;
    const QString in = writeFixture(dir.path(), "external");
    const QString out = dir.filePath("out.onnx");
    const Run run = runCli({"repack", in, "-o", out, "--checksum"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    auto model = loadModel(out);
    QVERIFY(model);
    int checked = 0;
    for (size_t i = 0; i < model->tensors().size(); ++i) {
        const TensorInfo& t = model->tensors()[i];
        if (!t.isExternal())
            continue;
        QCOMPARE(
            QString::fromStdString(*t.external->checksum), sha1Hex(tensorContent(i, kSizes[i])));
        ++checked;
    }
    QCOMPARE(checked, 4);
    QCOMPARE(runCli({"verify", out}).exitCode, 0);
}

void TestCliRepack::forceOverwritesUnrelatedFile()
{
    QTemporaryDir dir;
    const QString in = writeFixture(dir.path(), "plain");
    const QString out = dir.filePath("out.onnx");
    QFile other(out + ".data");
    QVERIFY(other.open(QIODevice::WriteOnly));
    other.write("another model's weights");
    other.close();

    const Run refused = runCli({"repack", in, "-o", out});
    QCOMPARE(refused.exitCode, 3); // needs --force
    QVERIFY2(refused.err.contains((out + ".data").toUtf8()), refused.err.constData());
    QCOMPARE(fileContents(out + ".data"), QByteArray("another model's weights"));
    QVERIFY(!QFile::exists(out));

    const Run forced = runCli({"repack", in, "-o", out, "--force"});
    QVERIFY2(forced.exitCode == 0, forced.err.constData());
    auto model = loadModel(out);
    QVERIFY(model);
    QCOMPARE(readAllTensors(*model).at("graph/t3"), tensorContent(3, kSizes[3]));
}

void TestCliRepack::progressDrawsBarOnStderr()
{
    QTemporaryDir dir;
    const QString in = writeFixture(dir.path(), "external");
    const Run quiet = runCli({"repack", in, "-o", dir.filePath("a.onnx")});
    QCOMPARE(quiet.exitCode, 0);
    QCOMPARE(quiet.err, QByteArray());
    const Run run = runCli({"repack", in, "-o", dir.filePath("b.onnx"), "--progress"});
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(run.err.contains("100%"), run.err.constData());
    QVERIFY2(run.err.contains('#') && run.err.contains('['), run.err.constData());
    QVERIFY(run.err.contains("ETA"));
}

// --align 16MiB --align-threshold 1 turned 84 MB of weights into 2.1 GB of data file without a
// word: a repack (and a plan) whose padding takes a tenth of the data files says how much.
void TestCliRepack::costlyAlignmentSaysWhatItsPaddingTakes()
{
    QTemporaryDir dir;
    const QString in = writeUint8Model(
        dir.path(), "in.onnx", std::vector<uint64_t>(8, 5000), 1024, "in.onnx.data");
    const Run plain = runCli({"repack", in, "-o", dir.filePath("plain.onnx")});
    QCOMPARE(plain.exitCode, 0);
    QVERIFY2(!plain.out.contains("padding"), plain.out.constData());
    const QStringList costly{"--align", "64KiB", "--align-threshold", "1"};
    const Run run = runCli(QStringList{"repack", in, "-o", dir.filePath("costly.onnx")} + costly);
    QCOMPARE(run.exitCode, 0);
    // 8 tensors of 5000 bytes, each at a multiple of 64 KiB: 7 x (65536 - 5000) of padding.
    const QByteArray note = QByteArray::fromStdString("note: alignment padding takes "
        + formatBytes(7 * (65536 - 5000)) + " of the " + formatBytes(7 * 65536 + 5000)
        + " of data files (");
    QVERIFY2(run.out.contains(note), run.out.constData());
    const Run plan = runCli(QStringList{"plan", in} + costly);
    QCOMPARE(plan.exitCode, 0);
    QVERIFY2(plan.out.contains(note), plan.out.constData());
}

void TestCliRepack::usageErrorExits2_data()
{
    QTest::addColumn<QStringList>("args"); // "@in" is the fixture, "@out" an output path
    QTest::newRow("no -o") << QStringList{"repack", "@in"};
    QTest::newRow("no input") << QStringList{"repack", "-o", "@out"};
    QTest::newRow("bad size unit")
        << QStringList{"repack", "@in", "-o", "@out", "--threshold", "12Q"};
    QTest::newRow("negative size") << QStringList{"repack", "@in", "-o", "@out", "--align", "-1"};
    QTest::newRow("unknown order")
        << QStringList{"repack", "@in", "-o", "@out", "--order", "random"};
    QTest::newRow("unknown option") << QStringList{"repack", "@in", "-o", "@out", "--bogus"};
    QTest::newRow("diff with one model") << QStringList{"diff", "@in"};
}

void TestCliRepack::usageErrorExits2()
{
    QFETCH(QStringList, args);
    QTemporaryDir dir;
    const QString in = writeFixture(dir.path(), "plain");
    args.replaceInStrings("@in", in).replaceInStrings("@out", dir.filePath("out.onnx"));
    const Run run = runCli(args);
    QCOMPARE(run.exitCode, 2);
    QVERIFY(!run.err.isEmpty());
    QVERIFY(!QFile::exists(dir.filePath("out.onnx")));
}

void TestCliRepack::refusedOptionsWriteNothing_data()
{
    QTest::addColumn<QStringList>("args"); // after "repack IN -o OUT"
    QTest::addColumn<QStringList>("named"); // what stderr must mention
    QTest::newRow("--inline --threshold")
        << QStringList{"--inline", "--threshold", "1MiB"} << QStringList{"--inline", "--threshold"};
    QTest::newRow("--threshold --inline")
        << QStringList{"--threshold", "1MiB", "--inline"} << QStringList{"--inline", "--threshold"};
    QTest::newRow("--inline --data")
        << QStringList{"--inline", "--data", "w.bin"} << QStringList{"--inline", "--data"};
    QTest::newRow("--inline --shard-size") << QStringList{"--inline", "--shard-size", "1MiB"}
                                           << QStringList{"--inline", "--shard-size"};
    QTest::newRow("--align 3") << QStringList{"--align", "3"} << QStringList{"--align", "'3'"};
    QTest::newRow("--align 1GiB") << QStringList{"--align", "1GiB"}
                                  << QStringList{"--align", "'1GiB'"};
    QTest::newRow("--align 32MiB")
        << QStringList{"--align", "32MiB"} << QStringList{"--align", "'32MiB'"};
    QTest::newRow("--align 6K") << QStringList{"--align", "6K"} << QStringList{"--align", "'6K'"};
    QTest::newRow("--wait -1") << QStringList{"--wait", "-1"} << QStringList{"--wait"};
    QTest::newRow("--wait soon") << QStringList{"--wait", "soon"} << QStringList{"--wait"};
    QTest::newRow("--wait nan") << QStringList{"--wait", "nan"} << QStringList{"--wait", "'nan'"};
}

// Usage errors are refused before anything is written: no model, no data file, no folder.
void TestCliRepack::refusedOptionsWriteNothing()
{
    QFETCH(QStringList, args);
    QFETCH(QStringList, named);
    QTemporaryDir dir;
    const QString in = writeFixture(dir.path(), "external");
    const auto before = snapshot(dir.path());
    const Run run = runCli(QStringList{"repack", in, "-o", dir.filePath("new/out.onnx")} + args);
    QCOMPARE(run.exitCode, 2);
    for (const QString& word : named)
        QVERIFY2(run.err.contains(word.toUtf8()), run.err.constData());
    QVERIFY(run.err.startsWith("onnx-repack: "));
    QCOMPARE(snapshot(dir.path()), before);
}

void TestCliRepack::missingOutputFolderIsCreated_data()
{
    QTest::addColumn<QString>("output"); // relative to the temporary folder
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("dataFile"); // expected beside the output, "" for none
    QTest::newRow("one level") << "new/out.onnx" << QStringList{} << "out.onnx.data";
    QTest::newRow("three levels") << "a/b/c/out.onnx" << QStringList{} << "out.onnx.data";
    QTest::newRow("sharded") << "a/b/out.onnx" << QStringList{"--shard-size", "1100KiB"}
                             << "out-00002-of-00002.onnx.data";
    QTest::newRow("inline") << "a/b/out.onnx" << QStringList{"--inline"} << "";
}

void TestCliRepack::missingOutputFolderIsCreated()
{
    QFETCH(QString, output);
    QFETCH(QStringList, args);
    QFETCH(QString, dataFile);
    QTemporaryDir dir;
    const QString in = writeFixture(dir.path(), "external");
    const QString out = dir.filePath(output);
    QVERIFY(!QFileInfo::exists(QFileInfo(out).path()));

    const Run run = runCli(QStringList{"repack", in, "-o", out} + args);
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QCOMPARE(run.err, QByteArray());
    QVERIFY(QFileInfo(out).isFile());
    if (!dataFile.isEmpty())
        QVERIFY(QFileInfo(QFileInfo(out).dir().filePath(dataFile)).isFile());

    auto model = loadModel(out);
    QVERIFY(model);
    QVERIFY(!model->hasErrors());
    const auto bytes = readAllTensors(*model);
    for (size_t i = 0; i < kSizes.size(); ++i)
        QCOMPARE(bytes.at("graph/" + tensorName(i)), tensorContent(i, kSizes[i]));
}

// The defaults in --help are the core's SaveOptions defaults (1024 bytes, 4096, 1 MiB, 30 s).
void TestCliRepack::helpShowsTheCoreDefaults()
{
    const Run run = runCli({"repack", "--help"});
    QCOMPARE(run.exitCode, 0);
    for (const char* text : {"--allow-corrupt", "--remove-unused", "--wait", "--force",
             "(default 1KiB)", "(default 4KiB)", "(default 1MiB)", "(default declaration)",
             "(default 30)", "up to 16MiB", "that no model uses"})
        QVERIFY2(run.out.contains(text), text);
}

void TestCliRepack::savedWithWarningSaysSo_data()
{
    QTest::addColumn<QString>("failAt"); // a fault point after the commit (core/save/crash_point.h)
    QTest::newRow("final rename fails") << "rename-model-final";
    QTest::newRow("temporary not removed") << "unlink-temp";
}

// A failure after the commit point: the model is saved (exit 0, it loads with the new layout)
// and both outputs say "with a warning", never "wrote".
void TestCliRepack::savedWithWarningSaysSo()
{
    QFETCH(QString, failAt);
    QTemporaryDir dir;
    const QString in = writeFixture(dir.path(), "plain");
    const QString out = dir.filePath("out.onnx");
    const Run run = runCli({"repack", in, "-o", out}, failAt);
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY2(run.out.startsWith("saved with a warning"), run.out.constData());
    QVERIFY2(!run.out.contains("wrote"), run.out.constData());
    QVERIFY2(run.err.startsWith("onnx-repack: warning: "), run.err.constData());

    auto model = loadModel(out);
    QVERIFY(model);
    QVERIFY(!model->hasErrors());
    int external = 0;
    for (const auto& t : model->tensors())
        external += t.isExternal();
    QCOMPARE(external, 4);
    const auto bytes = readAllTensors(*model);
    for (size_t i = 0; i < kSizes.size(); ++i)
        QCOMPARE(bytes.at("graph/" + tensorName(i)), tensorContent(i, kSizes[i]));
}

void TestCliRepack::inPlaceSaveReportsUnusedDataFile_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<bool>("removed");
    QTest::newRow("kept") << QStringList{} << false;
    QTest::newRow("--remove-unused") << QStringList{"--remove-unused"} << true;
}

// In place with a new data name, src.data is no longer used: stdout says so with its size, and
// --remove-unused removes it and says that too.
void TestCliRepack::inPlaceSaveReportsUnusedDataFile()
{
    QFETCH(QStringList, args);
    QFETCH(bool, removed);
    QTemporaryDir dir;
    const QString in = writeFixture(dir.path(), "external");
    const qint64 oldSize = QFileInfo(dir.filePath("src.data")).size();
    QVERIFY(oldSize > 0);
    const Run run = runCli(QStringList{"repack", in, "-o", in, "--data", "new.data"} + args);
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY2(run.out.startsWith("wrote "), run.out.constData());

    const QByteArray line = "no longer used by the model: ";
    const qsizetype at = run.out.indexOf(line);
    QVERIFY2(at >= 0, run.out.constData());
    const QByteArray rest = run.out.mid(at + line.size()).split('\n').first();
    QVERIFY2(rest.contains("src.data"), rest.constData());
    QVERIFY2(rest.contains(QByteArray("(") + repack::formatBytes(oldSize).c_str() + ")"),
        rest.constData());
    QCOMPARE(run.out.contains("\nremoved "), removed);
    if (removed)
        QVERIFY2(run.out.contains("\nremoved " + dir.filePath("src.data").toUtf8() + "\n")
                || run.out.contains("\nremoved src.data\n"),
            run.out.constData());
    QCOMPARE(QFile::exists(dir.filePath("src.data")), !removed);

    auto model = loadModel(in);
    QVERIFY(model);
    const auto bytes = readAllTensors(*model);
    for (size_t i = 0; i < kSizes.size(); ++i)
        QCOMPARE(bytes.at("graph/" + tensorName(i)), tensorContent(i, kSizes[i]));
}

void TestCliRepack::failureExitsNamingFile_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("named"); // what stderr must mention
    QTest::addColumn<int>("exitCode"); // by the error's kind (core/result.h's kErrorKinds)
    QTest::newRow("missing input")
        << QStringList{"repack", "@dir/nope.onnx", "-o", "@out"} << "@dir/nope.onnx" << 1;
    // Paths that can never work are usage errors wherever the core finds them (SPEC 6: exit 2).
    QTest::newRow("data outside the folder")
        << QStringList{"repack", "@in", "-o", "@out", "--data", "../x.data"} << "../x.data" << 2;
    QTest::newRow("output folder is a file")
        << QStringList{"repack", "@in", "-o", "@dir/in.onnx/out.onnx"} << "@dir/in.onnx" << 2;
}

void TestCliRepack::failureExitsNamingFile()
{
    QFETCH(QStringList, args);
    QFETCH(QString, named);
    QTemporaryDir dir;
    const QString in = writeFixture(dir.path(), "plain");
    const auto before = hashFolder(dir.path());
    args.replaceInStrings("@in", in)
        .replaceInStrings("@out", dir.filePath("out.onnx"))
        .replaceInStrings("@dir", dir.path());
    named.replace("@dir", dir.path());
    QFETCH(int, exitCode);
    const Run run = runCli(args);
    QCOMPARE(run.exitCode, exitCode);
    QVERIFY2(run.err.contains(named.toUtf8()), run.err.constData());
    QVERIFY(run.err.startsWith("onnx-repack: "));
    QCOMPARE(hashFolder(dir.path()), before);
}

void TestCliRepack::diffJsonSchema()
{
    QTemporaryDir dir;
    const QString in = writeFixture(dir.path(), "plain");
    const QString out = dir.filePath("out.onnx");
    QCOMPARE(runCli({"repack", in, "-o", out}).exitCode, 0);
    const Run run = runCli({"diff", in, out, "--json"});
    QCOMPARE(run.exitCode, 0);
    QJsonParseError error{};
    const QJsonObject json = QJsonDocument::fromJson(run.out, &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);

    QStringList keys = json.keys();
    keys.sort();
    QCOMPARE(keys,
        (QStringList{"added", "content_changed", "moved", "removed", "schema", "sources",
            "storage_changed", "unchanged"}));
    QCOMPARE(json["sources"].toArray(), QJsonArray()); // no file on a server
    QCOMPARE(json["schema"].toString(), QString("onnx-repack/diff/1"));
    auto namesOf = [&](const char* key) {
        QStringList names;
        for (const auto& v : json[key].toArray()) {
            const QJsonObject e = v.toObject();
            if (e["scope"].toString() == "graph" && e.contains("a") && e.contains("b"))
                names << e["name"].toString();
        }
        return names.join(' ');
    };
    QCOMPARE(namesOf("storage_changed"), QString("t1 t2 t3 t4"));
    QCOMPARE(namesOf("unchanged"), QString("t0"));
    for (const char* key : {"added", "removed", "moved", "content_changed"})
        QVERIFY2(json[key].toArray().isEmpty(), key);
    const QJsonObject t3 = json["storage_changed"].toArray()[2].toObject();
    QCOMPARE(t3["a"].toObject()["storage"].toString(), QString("inline"));
    QCOMPARE(t3["b"].toObject()["storage"].toString(), QString("external"));
    QCOMPARE(t3["b"].toObject()["location"].toString(), QString("out.onnx.data"));
    QCOMPARE(t3["b"].toObject()["offset"].toInt(), 8192);
}

QTEST_GUILESS_MAIN(TestCliRepack)
#include "tst_cli_repack.moc"
