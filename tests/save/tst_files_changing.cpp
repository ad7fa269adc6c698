// Files changing underneath (SPEC 5c): a data file (or the .onnx) truncated at a random moment
// while a command reads it never kills the process. Every entry point that reads bytes
// (verify, inspect --deep, diff, repack in its modes) runs 50 rounds, the test truncating the
// file at a random instant of the run and to a random length: each ends with exit 0 (it read
// everything before) or 1 with an error naming the file, and a repack that fails leaves the
// input's .onnx byte-identical and no temporaries behind.
#include "tests/support/cli_run.h"
#include "tests/support/save_fixtures.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <unistd.h>

using namespace fixtures;

namespace {

constexpr int kRounds = 50;
constexpr uint64_t kTensorBytes = 1u << 20;
constexpr size_t kTensors = 24; // 24 MiB of external data per model

// Writes a.onnx (+ a.data) into `dir`, and b.onnx (+ b.data), equal tensors in other files,
// when `withB`; removes what a previous round left besides b. `inlineModel`: a.onnx holds many
// tensors inline instead.
void writeFixtures(const QString& dir, bool inlineModel, bool withB)
{
    QDir folder(dir);
    if (withB)
        folder.removeRecursively();
    QDir().mkpath(dir);
    for (const QString& name : folder.entryList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot))
        if (!name.startsWith("b."))
            QFileInfo(folder.filePath(name)).isDir()
                ? (void)QDir(folder.filePath(name)).removeRecursively()
                : (void)folder.remove(name);
    const std::vector<uint64_t> sizes(kTensors, kTensorBytes);
    if (inlineModel)
        writeUint8Model(dir, "a.onnx", std::vector<uint64_t>(4000, 4096), uint64_t(-1), "a.data");
    else
        writeUint8Model(dir, "a.onnx", sizes, 1024, "a.data");
    if (withB && !inlineModel)
        writeUint8Model(dir, "b.onnx", sizes, 1024, "b.data");
}

QStringList withDir(const QStringList& args, const QString& dir)
{
    QStringList out;
    for (const QString& a : args)
        out << (a.endsWith(".onnx") || a.endsWith(".json") ? dir + "/" + a : a);
    return out;
}

struct Outcome {
    bool crashed = false;
    int exitCode = -1;
    QByteArray err;
    QByteArray output; // stdout and stderr: inspect prints its problems to stdout
};

// Runs the CLI and truncates `victim` to `length` bytes after `delayUs` (-1: never).
Outcome runTruncating(const QStringList& args, const QString& victim, qint64 delayUs, qint64 length,
    const QProcessEnvironment& environment)
{
    QProcess process;
    process.setProcessEnvironment(environment);
    process.start(qEnvironmentVariable("REPACK_CLI"), args);
    Outcome outcome;
    if (!process.waitForStarted(30000))
        return outcome;
    if (delayUs >= 0) {
        QThread::usleep(static_cast<unsigned long>(delayUs));
        (void)::truncate(victim.toLocal8Bit().constData(), length);
    }
    if (!process.waitForFinished(300000)) {
        process.kill();
        process.waitForFinished();
        outcome.err = "did not finish";
        return outcome;
    }
    outcome.crashed = process.exitStatus() != QProcess::NormalExit;
    outcome.exitCode = process.exitCode();
    outcome.err = process.readAllStandardError();
    outcome.output = process.readAllStandardOutput() + outcome.err;
    return outcome;
}

} // namespace

class TestFilesChanging : public QObject {
    Q_OBJECT

private slots:
    void truncationAtARandomMomentNeverKills_data();
    void truncationAtARandomMomentNeverKills();
};

void TestFilesChanging::truncationAtARandomMomentNeverKills_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("victim");
    QTest::addColumn<bool>("inlineModel");
    QTest::addColumn<QString>("output"); // a repack's new output, "" when none or in place
    const QString data = "a.data";
    QTest::addRow("verify") << QStringList{"verify", "a.onnx"} << data << false << "";
    QTest::addRow("inspect --deep")
        << QStringList{"inspect", "a.onnx", "--deep"} << data << false << "";
    QTest::addRow("diff") << QStringList{"diff", "a.onnx", "b.onnx"} << data << false << "";
    QTest::addRow("repack to a new file")
        << QStringList{"repack", "a.onnx", "-o", "out/new.onnx"} << data << false << "out/new.onnx";
    QTest::addRow("repack in place")
        << QStringList{"repack", "a.onnx", "-o", "a.onnx", "--threshold", "8MiB"} << data << false
        << "";
    QTest::addRow("repack --dedupe") << QStringList{"repack", "a.onnx", "-o", "out/d.onnx",
        "--dedupe"} << data << false << "out/d.onnx";
    QTest::addRow("repack --checksum") << QStringList{"repack", "a.onnx", "-o", "out/c.onnx",
        "--checksum"} << data << false << "out/c.onnx";
    QTest::addRow("inspect of a .onnx truncated while it is scanned")
        << QStringList{"inspect", "a.onnx", "--json"} << "a.onnx" << true << "";
    QTest::addRow("repack of an inline .onnx truncated while it is copied")
        << QStringList{"repack", "a.onnx", "-o", "out/i.onnx", "--threshold", "1"} << "a.onnx"
        << true << "out/i.onnx";
}

void TestFilesChanging::truncationAtARandomMomentNeverKills()
{
    QFETCH(QStringList, args);
    QFETCH(QString, victim);
    QFETCH(bool, inlineModel);
    QFETCH(QString, output);
    QTemporaryDir scratch;
    const QString dir = scratch.path() + "/m";
    const QStringList argv = withDir(args, dir);
    const QString victimPath = dir + "/" + victim;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    // An interrupted scan of the .onnx abandons what it had allocated (core/mapped_memory.h):
    // under LeakSanitizer that one-off loss would be reported as a leak at exit.
    if (victim.endsWith(".onnx"))
        environment.insert("ASAN_OPTIONS",
            environment.value("ASAN_OPTIONS") + (environment.contains("ASAN_OPTIONS") ? ":" : "")
                + "detect_leaks=0");

    // How long one run takes, untouched: the window the truncation falls into.
    writeFixtures(dir, inlineModel, true);
    QElapsedTimer timer;
    timer.start();
    const Outcome calm = runTruncating(argv, victimPath, -1, 0, environment);
    const qint64 windowUs = std::max<qint64>(timer.nsecsElapsed() / 1000, 2000);
    QVERIFY2(!calm.crashed && calm.exitCode == 0, calm.err.constData());
    const qint64 size = QFileInfo(victimPath).size();

    QRandomGenerator random(20261203);
    int failed = 0, guarded = 0;
    for (int round = 0; round < kRounds; ++round) {
        writeFixtures(dir, inlineModel, false);
        const QByteArray modelBefore = fileContents(dir + "/a.onnx");
        const qint64 delay = qint64(random.bounded(quint64(windowUs)));
        const qint64 length = qint64(random.bounded(quint64(size)));
        const Outcome o = runTruncating(argv, victimPath, delay, length, environment);
        const QString where = QStringLiteral("round %1 (truncated to %2 bytes after %3 us): ")
                                  .arg(round)
                                  .arg(length)
                                  .arg(delay);
        QVERIFY2(!o.crashed, qPrintable(where + "the process died: " + o.err));
        QVERIFY2(o.exitCode == 0 || o.exitCode == 1,
            qPrintable(where + QString("exit code %1: ").arg(o.exitCode) + o.err));
        if (o.exitCode == 1) {
            ++failed;
            guarded += o.output.contains("shrank or changed while it was read") ? 1 : 0;
            QVERIFY2(o.output.contains(victim.toUtf8()), qPrintable(where + o.output));
            if (args.first() == "repack" && victim != "a.onnx") {
                QVERIFY2(fileContents(dir + "/a.onnx") == modelBefore,
                    qPrintable(where + "the input .onnx changed"));
                if (!output.isEmpty())
                    QVERIFY2(!QFile::exists(dir + "/" + output),
                        qPrintable(where + "a failed repack left its output"));
            }
        }
        if (args.first() == "repack") {
            QVERIFY2(saveTempsIn(dir).isEmpty(), qPrintable(where + saveTempsIn(dir).join(", ")));
            QVERIFY2(saveTempsIn(dir + "/out").isEmpty(),
                qPrintable(where + saveTempsIn(dir + "/out").join(", ")));
        }
    }
    qInfo("%d rounds in a window of %lld us: %d failed cleanly, %d of them in a mapped read",
        kRounds, windowUs, failed, guarded);
}

QTEST_GUILESS_MAIN(TestFilesChanging)
#include "tst_files_changing.moc"
