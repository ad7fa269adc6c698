// A re-save that changes nothing writes nothing (SPEC 5c): an in-place repack with the options
// the files are already laid out by says so and leaves every file as it is (same inode, same
// modification time), unless --rewrite. Anything a rewrite would change (options, orphaned
// bytes, a missing checksum, a file replaced since the model was opened, a save elsewhere)
// writes as before.
#include "core/model/model.h"
#include "core/plan/save_plan.h"
#include "core/save/save.h"
#include "tests/support/cli_run.h"
#include "tests/support/save_fixtures.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace repack;
using namespace fixtures;

namespace {

// Inode and modification time of every file in `dir`: what a write, or a rename over, changes.
QMap<QString, QString> stamps(const QString& dir)
{
    QMap<QString, QString> out;
    for (const QString& name : QDir(dir).entryList(QDir::Files | QDir::Hidden)) {
        struct stat st { };
        if (::stat(QDir(dir).filePath(name).toLocal8Bit().constData(), &st) == 0)
            out[name] = QStringLiteral("%1/%2.%3")
                            .arg(st.st_ino)
                            .arg(st.st_mtim.tv_sec)
                            .arg(st.st_mtim.tv_nsec);
    }
    return out;
}

// m.onnx with external tensors in m.onnx.data, already saved once in place with `args`.
QString savedModel(const QString& dir, const QStringList& args = {})
{
    const QString path
        = writeUint8Model(dir, "m.onnx", {100, 5000, 2 << 20, 3 << 20}, 1024, "m.onnx.data");
    const CliRun run = runCli(QStringList{"repack", path, "-o", path} + args);
    return run.exitCode == 0 ? path : QString();
}

} // namespace

class TestUnchangedSave : public QObject {
    Q_OBJECT

private slots:
    void resaveWithTheSameOptionsWritesNothing_data();
    void resaveWithTheSameOptionsWritesNothing();
    void rewriteWritesAnyway();
    void whatARewriteWouldChangeIsWritten_data();
    void whatARewriteWouldChangeIsWritten();
    void fileReplacedSinceOpeningIsNeverUnchanged();
};

void TestUnchangedSave::resaveWithTheSameOptionsWritesNothing_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addRow("defaults") << QStringList{};
    QTest::addRow("threshold and alignment") << QStringList{"--threshold", "4KiB", "--align", "0"};
    QTest::addRow("shards") << QStringList{"--shard-size", "3MiB"};
    QTest::addRow("checksums") << QStringList{"--checksum"};
    QTest::addRow("safetensors") << QStringList{"--format", "safetensors"};
    QTest::addRow("dedupe") << QStringList{"--dedupe"};
}

void TestUnchangedSave::resaveWithTheSameOptionsWritesNothing()
{
    QFETCH(QStringList, args);
    QTemporaryDir dir;
    const QString path = savedModel(dir.path(), args);
    QVERIFY(!path.isEmpty());
    const auto hashes = hashFolder(dir.path());
    const auto before = stamps(dir.path());
    auto model = loadModel(path);
    QVERIFY(model);
    const auto values = readAllTensors(*model);

    const CliRun again = runCli(QStringList{"repack", path, "-o", path} + args);
    QVERIFY2(again.exitCode == 0, again.err.constData());
    QVERIFY2(again.out.startsWith("nothing to change: "), again.out.constData());
    QCOMPARE(stamps(dir.path()), before);
    QCOMPARE(hashFolder(dir.path()), hashes);

    // Through the core: the report says so and the model still reads the same bytes.
    SaveOptions options;
    if (args.contains("--checksum"))
        options.checksum = true;
    if (!args.isEmpty() && args != QStringList{"--checksum"})
        return; // the other layouts are checked through the CLI above
    auto report = save(*model, path.toStdString(), options);
    QVERIFY(report);
    QVERIFY(report->unchanged);
    QCOMPARE(report->bytesWritten, uint64_t(0));
    QCOMPARE(readAllTensors(*model), values);
    QCOMPARE(stamps(dir.path()), before);
}

void TestUnchangedSave::rewriteWritesAnyway()
{
    QTemporaryDir dir;
    const QString path = savedModel(dir.path());
    QVERIFY(!path.isEmpty());
    const auto hashes = hashFolder(dir.path());
    const auto before = stamps(dir.path());
    const CliRun run = runCli({"repack", path, "-o", path, "--rewrite"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY2(run.out.startsWith("wrote "), run.out.constData());
    QVERIFY(stamps(dir.path())["m.onnx.data"] != before["m.onnx.data"]);
    QCOMPARE(hashFolder(dir.path()), hashes); // deterministic: the same bytes again
}

void TestUnchangedSave::whatARewriteWouldChangeIsWritten_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("damage"); // done to the folder before the re-save
    QTest::addRow("other alignment") << QStringList{"--align", "64KiB"} << "";
    QTest::addRow("other threshold") << QStringList{"--threshold", "3MiB"} << "";
    QTest::addRow("checksums asked, none there") << QStringList{"--checksum"} << "";
    QTest::addRow("orphaned bytes at the end") << QStringList{} << "append";
    QTest::addRow("saved elsewhere") << QStringList{"-o", "copy.onnx"} << "";
}

void TestUnchangedSave::whatARewriteWouldChangeIsWritten()
{
    QFETCH(QStringList, args);
    QFETCH(QString, damage);
    QTemporaryDir dir;
    const QString path = savedModel(dir.path());
    QVERIFY(!path.isEmpty());
    const qint64 planned = QFileInfo(dir.filePath("m.onnx.data")).size();
    if (damage == "append") {
        QFile data(dir.filePath("m.onnx.data"));
        QVERIFY(data.open(QIODevice::Append));
        data.write(QByteArray(100, '\xEE'));
    }
    const auto before = stamps(dir.path());
    QStringList argv{"repack", path};
    if (!args.contains("-o"))
        argv << "-o" << path;
    for (const QString& a : args)
        argv << (a == "copy.onnx" ? dir.filePath(a) : a);
    const CliRun run = runCli(argv);
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY2(run.out.startsWith("wrote "), run.out.constData());
    if (!args.contains("-o"))
        QVERIFY(stamps(dir.path())["m.onnx.data"] != before["m.onnx.data"]);
    else
        QVERIFY(QFile::exists(dir.filePath("copy.onnx")));
    if (damage == "append") // the rewrite drops the orphaned tail
        QCOMPARE(QFileInfo(dir.filePath("m.onnx.data")).size(), planned);
}

void TestUnchangedSave::fileReplacedSinceOpeningIsNeverUnchanged()
{
    QTemporaryDir dir;
    const QString path = savedModel(dir.path());
    QVERIFY(!path.isEmpty());
    auto model = loadModel(path);
    QVERIFY(model);
    auto plan = planSave(*model, path.toStdString(), SaveOptions{});
    QVERIFY(plan);
    QVERIFY(planKeepsLayout(*model, path.toStdString(), *plan, SaveOptions{}));
    // Another program replaces the data file with one of the same size and other bytes.
    const QString data = dir.filePath("m.onnx.data");
    const qint64 size = QFileInfo(data).size();
    QVERIFY(QFile::remove(data));
    QFile replaced(data);
    QVERIFY(replaced.open(QIODevice::WriteOnly));
    replaced.write(QByteArray(size, '\x11'));
    replaced.close();
    QVERIFY(!planKeepsLayout(*model, path.toStdString(), *plan, SaveOptions{}));
    auto report = save(*model, path.toStdString(), SaveOptions{});
    QVERIFY(!report || !report->unchanged);
    if (!report)
        QVERIFY2(QString::fromStdString(report.error().message).contains("m.onnx.data"),
            report.error().message.c_str());
}

QTEST_GUILESS_MAIN(TestUnchangedSave)
#include "tst_unchanged_save.moc"
