// Crash consistency (SPEC sections 5 and 5a): `onnx-repack repack` killed with SIGKILL, either at
// each point of the save protocol (ONNX_REPACK_CRASH_AT) or at random moments during in-place
// saves of a 120 MiB model, leaves the model path opening as the complete old or the complete new
// model, with every tensor's bytes intact, for this tool and for onnx's own Python loader
// (onnx.load of python3-onnx 1.12); the next save then succeeds and cleans up. A system call that
// fails after the commit point (ONNX_REPACK_FAIL_AT) leaves the new model loadable and says
// "saved with a warning"; one that fails at or before it changes nothing.
#include "core/inspect/verify.h"
#include "core/model/model.h"
#include "tests/support/cli_run.h"
#include "tests/support/crash_fixtures.h"
#include "tests/support/model_builder.h"
#include "tests/support/python_reader.h"
#include "tests/support/result_checks.h"
#include "tests/support/save_fixtures.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <algorithm>
#include <csignal>
#include <sys/stat.h>

using namespace fixtures;

namespace {

const QString kModel = QStringLiteral("m.onnx");

using Run = ShellRun;

Run runCommand(const QString& dir, const QString& command, const QStringList& args,
    const QString& crashAt = {}, const QString& failAt = {})
{
    return runCliInShell(dir, command, args, crashAt, failAt);
}

Run runCli(const QString& dir, const QStringList& args, const QString& crashAt = {})
{
    return runCliInShell(dir, QStringLiteral("repack"), args, crashAt);
}

const QString kValuesScript = QStringLiteral(REPACK_VALUES_SCRIPT);

// onnx.load(path) of python3-onnx, an independent reader, reads every value of `expected`.
#define PYTHON_LOADS(path, expected, context)                                                      \
    QVERIFY_PYTHON_LOADS(kValuesScript, path, expected, context)

// A location as the complete model names it: a temporary "<name>.repack-tmp-<x>" of the data
// file (or the older ".<name>.repack-tmp-<x>") counts as that data file (the protocol's
// committed state before the swap).
std::string finalLocation(const std::string& location)
{
    const auto slash = location.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : location.substr(0, slash + 1);
    const std::string name = location.substr(dir.size());
    const auto marker = name.find(".repack-tmp-");
    if (marker == std::string::npos || marker == 0)
        return location;
    const bool hidden = name[0] == '.' && marker > 1;
    return dir + name.substr(hidden ? 1 : 0, hidden ? marker - 1 : marker);
}

Layout finalLayout(Layout layout)
{
    for (auto& [name, at] : layout)
        at.location = finalLocation(at.location);
    return layout;
}

std::string layoutDiff(const Layout& got, const Layout& old, const Layout& expectedNew)
{
    std::string out;
    for (const auto& [name, at] : got) {
        const bool isOld = old.count(name) && old.at(name) == at;
        const bool isNew = expectedNew.count(name) && expectedNew.at(name) == at;
        out += "  " + name + ": " + describe(at) + (isOld ? " (old)" : "") + (isNew ? " (new)" : "")
            + (!isOld && !isNew ? " (neither!)" : "") + "\n";
    }
    return out;
}

// The errors verify() finds, one per line.
std::string verifyErrors(const repack::Model& model)
{
    std::string out;
    for (const auto& p : repack::verify(model))
        if (p.severity == repack::Severity::Error)
            out += p.tensor + ": " + p.code + ": " + p.message + "\n";
    return out;
}

using Loaded = std::unique_ptr<repack::Model>;

// Loads `path`, failing the test unless it verifies clean with every tensor's bytes intact.
#define LOAD_INTACT(var, path, expectedBytes)                                                      \
    Loaded var;                                                                                    \
    {                                                                                              \
        auto loaded_ = repack::Model::load((path).toStdString());                                  \
        QVERIFY_OK(loaded_);                                                                       \
        var = std::move(*loaded_);                                                                 \
        const std::string errors_ = verifyErrors(*var);                                            \
        QVERIFY2(errors_.empty(), errors_.c_str());                                                \
        const std::string bytes_ = compareBytes(*var, expectedBytes);                              \
        QVERIFY2(bytes_.empty(), bytes_.c_str());                                                  \
    }

enum class Source { Inline, External, Sharded };
const QStringList kShardOptions{QStringLiteral("--shard-size"), QStringLiteral("2MiB")};

// Writes the source model of a scenario into `dir` as m.onnx (the sharded one is a prior
// successful repack of the external one).
bool prepareSource(Source source, const QString& dir, const onnx::ModelProto& proto)
{
    switch (source) {
    case Source::Inline:
        return saveModel(proto, QDir(dir).filePath(kModel));
    case Source::External:
        return saveWithExternalData(proto, dir, kModel, "m.onnx.data");
    case Source::Sharded:
        return saveWithExternalData(proto, dir, kModel, "m.onnx.data")
            && runCli(dir, QStringList{kModel, "-o", kModel, "--align", "0"} + kShardOptions).status
            == 0;
    }
    return false;
}

QByteArray sha1(std::span<const std::byte> bytes)
{
    return QCryptographicHash::hash(
        QByteArrayView(reinterpret_cast<const char*>(bytes.data()), qsizetype(bytes.size())),
        QCryptographicHash::Sha1);
}

} // namespace

Q_DECLARE_METATYPE(Source)

class TestCrashConsistency : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void killedAtProtocolPoint_data();
    void killedAtProtocolPoint();
    void failureAtProtocolStep_data();
    void failureAtProtocolStep();
    void randomKillsDuringInPlaceSaves();
};

void TestCrashConsistency::initTestCase()
{
    QVERIFY2(QFileInfo(qEnvironmentVariable("REPACK_CLI")).isExecutable(),
        "REPACK_CLI must name the onnx-repack executable");
    QVERIFY2(QFileInfo(qEnvironmentVariable("REPACK_PYTHON")).isExecutable(),
        "REPACK_PYTHON must name a python3 with python3-onnx (/usr/bin/python3)");
}

void TestCrashConsistency::killedAtProtocolPoint_data()
{
    QTest::addColumn<Source>("source");
    QTest::addColumn<QString>("output"); // relative to the work folder
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("point"); // ONNX_REPACK_CRASH_AT
    // Must this save pass that point? A save that writes no data file may commit its model in
    // one rename and skip the later points; then it completes and leaves the new model.
    QTest::addColumn<bool>("mustReach");
    QTest::addColumn<bool>("committed"); // after the point, the model path is the new model

    struct Scenario {
        const char* name;
        Source source;
        QString output;
        QStringList options;
        bool writesData; // a save that writes no data file has no data swap
    };
    const QList<Scenario> scenarios{
        // Default alignment and size order over a dense declaration-order file: data moves.
        {"in place, data moves", Source::External, kModel, {"--order", "size"}, true},
        {"save as", Source::External, "saved/n.onnx", {"--align", "0", "--order", "size"}, true},
        {"inline to external", Source::Inline, kModel, {}, true},
        {"external to inline", Source::External, kModel, {"--inline"}, false},
        {"sharded, in place", Source::Sharded, kModel,
            QStringList{"--order", "size"} + kShardOptions, true},
    };
    struct Point {
        const char* name;
        bool committed; // at or after the commit point
    };
    const QList<Point> points{{"locked", false}, {"data-written", false}, {"models-written", false},
        {"model-temp-committed", true}, {"data-swapped", true}, {"model-final-committed", true},
        {"cleaned", true}};
    for (const auto& s : scenarios)
        for (const auto& p : points)
            QTest::addRow("%s, killed at %s", s.name, p.name)
                << s.source << s.output << s.options << QString::fromLatin1(p.name)
                << (s.writesData || !p.committed) << p.committed;
}

void TestCrashConsistency::killedAtProtocolPoint()
{
    QFETCH(Source, source);
    QFETCH(QString, output);
    QFETCH(QStringList, options);
    QFETCH(QString, point);
    QFETCH(bool, mustReach);
    QFETCH(bool, committed);

    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString work = tmp.filePath("work"), reference = tmp.filePath("reference");
    const WeightedModel fixture = weightedModel();
    QVERIFY(QDir().mkpath(work + "/saved") && QDir().mkpath(reference + "/saved"));
    QVERIFY(prepareSource(source, work, fixture.proto));
    QVERIFY(prepareSource(source, reference, fixture.proto));
    const QStringList args = QStringList{kModel, "-o", output} + options;
    const bool inPlace = output == kModel;

    // The two admissible end states: the source as it is, and what an uninterrupted save
    // of an identical copy produces.
    Layout oldLayout, newLayout;
    {
        LOAD_INTACT(old, QDir(work).filePath(kModel), fixture.bytes);
        oldLayout = layoutOf(*old);
        const Run full = runCli(reference, args);
        QVERIFY2(full.status == 0, full.err.constData());
        LOAD_INTACT(saved, QDir(reference).filePath(output), fixture.bytes);
        newLayout = layoutOf(*saved);
        if (inPlace) // otherwise the locations differ anyway
            QVERIFY2(
                oldLayout != newLayout, "the save must change the layout to tell states apart");
    }

    const Run crashed = runCli(work, args, point);
    const ValueHashes values = hashesOf(fixture.bytes); // old and new hold the same values
    const QString target = QDir(work).filePath(output);
    if (!mustReach && crashed.status == 0) { // skipped the point: a complete save
        PYTHON_LOADS(target, values, QStringLiteral("after a save that skipped ") + point);
        LOAD_INTACT(saved, target, fixture.bytes);
        QVERIFY(layoutOf(*saved) == newLayout);
        QCOMPARE(tempLeftovers(work), QStringList());
        return;
    }
    QVERIFY2(crashed.status == kSigkillStatus,
        qPrintable(QStringLiteral("expected death by SIGKILL at %1, got status %2: %3")
                       .arg(point)
                       .arg(crashed.status)
                       .arg(QString::fromUtf8(crashed.err))));

    if (!inPlace) { // Save As never touches the source
        LOAD_INTACT(src, QDir(work).filePath(kModel), fixture.bytes);
        QVERIFY(layoutOf(*src) == oldLayout);
        PYTHON_LOADS(QDir(work).filePath(kModel), values, QStringLiteral("the source"));
    }
    bool isNew = false;
    if (inPlace || QFileInfo::exists(target)) {
        // Every reader, not only this tool: onnx 1.12 strips a leading "." from locations.
        PYTHON_LOADS(target, values, QStringLiteral("after the kill at ") + point);
        LOAD_INTACT(after, target, fixture.bytes);
        const Layout got = finalLayout(layoutOf(*after));
        const bool isOld = inPlace && got == oldLayout;
        isNew = got == newLayout;
        QVERIFY2(isOld || isNew,
            ("neither the old nor the new layout:\n" + layoutDiff(got, oldLayout, newLayout))
                .c_str());
    }
    // The protocol commits by renaming the model that names the new data: before that the
    // old model is on disk, from then on the new one.
    QCOMPARE(isNew, committed);

    // `clean` finishes a commit the kill interrupted (issue 35): the model then names its
    // final files, none of which has a second link (onnx >= 1.21 and onnx_ir refuse those), and
    // no temporary is left; its values and layout are those the kill left.
    if (inPlace || QFileInfo::exists(target)) {
        const Run cleaned = runCommand(work, QStringLiteral("clean"), {output});
        QVERIFY2(cleaned.status == 0, (cleaned.out + cleaned.err).constData());
        PYTHON_LOADS(target, values, QStringLiteral("cleaned after the kill at ") + point);
        LOAD_INTACT(afterClean, target, fixture.bytes);
        QVERIFY(layoutOf(*afterClean) == (isNew ? newLayout : oldLayout));
        for (const auto& t : afterClean->tensors()) {
            if (!t.isExternal())
                continue;
            QVERIFY2(t.external->location().find(".repack-tmp-") == std::string::npos,
                t.external->location().c_str());
            struct stat st { };
            QVERIFY(::stat(t.external->resolvedPath().c_str(), &st) == 0);
            QVERIFY2(st.st_nlink == 1, t.external->location().c_str());
        }
        const QStringList left = tempLeftovers(QFileInfo(target).absolutePath());
        QVERIFY2(left.isEmpty(), qPrintable(left.join(", ")));
    }

    // The next save completes and removes what the killed one left behind. (Save As writes
    // over the target the killed run may have completed: that needs consent.)
    // In place, that includes a model left naming its data's temporary: its own final data
    // file must not count as a stranger's.
    const Run again = runCli(work, inPlace ? args : args + QStringList{"--force"});
    QVERIFY2(again.status == 0, again.err.constData());
    LOAD_INTACT(resaved, target, fixture.bytes);
    QVERIFY(layoutOf(*resaved) == newLayout);
    const QStringList leftovers = tempLeftovers(work);
    QVERIFY2(leftovers.isEmpty(), qPrintable(leftovers.join(", ")));
}

void TestCrashConsistency::failureAtProtocolStep_data()
{
    QTest::addColumn<QString>("point"); // ONNX_REPACK_FAIL_AT
    QTest::addColumn<bool>("committed"); // the failure comes after the commit point

    QTest::newRow("rename-model-temp: the commit itself fails")
        << QStringLiteral("rename-model-temp") << false;
    QTest::newRow("fsync-dir: no directory sync succeeds") << QStringLiteral("fsync-dir") << true;
    QTest::newRow("link-data: no hard links") << QStringLiteral("link-data") << true;
    QTest::newRow("rename-data: the data swap fails") << QStringLiteral("rename-data") << true;
    QTest::newRow("rename-model-final: the final model rename fails")
        << QStringLiteral("rename-model-final") << true;
    QTest::newRow("unlink-temp: temporaries cannot be removed")
        << QStringLiteral("unlink-temp") << true;
}

// SPEC 5a "after the commit point": a failure there is "saved with a warning" (exit 0), the
// model path loads with the new layout in this tool and in onnx's loader, and nothing committed
// is deleted, not even by `clean` afterwards; a failure at or before the commit changes nothing.
void TestCrashConsistency::failureAtProtocolStep()
{
    QFETCH(QString, point);
    QFETCH(bool, committed);

    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString work = tmp.filePath("work"), reference = tmp.filePath("reference");
    QVERIFY(QDir().mkpath(work) && QDir().mkpath(reference));
    const WeightedModel fixture = weightedModel();
    QVERIFY(prepareSource(Source::External, work, fixture.proto));
    QVERIFY(prepareSource(Source::External, reference, fixture.proto));
    const QStringList args{kModel, "-o", kModel, "--order", "size"};
    const QString model = QDir(work).filePath(kModel);
    const ValueHashes values = hashesOf(fixture.bytes);

    Layout oldLayout, newLayout;
    {
        LOAD_INTACT(old, model, fixture.bytes);
        oldLayout = layoutOf(*old);
        const Run full = runCli(reference, args);
        QVERIFY2(full.status == 0, full.err.constData());
        LOAD_INTACT(saved, QDir(reference).filePath(kModel), fixture.bytes);
        newLayout = layoutOf(*saved);
        QVERIFY(oldLayout != newLayout);
    }
    const auto before = hashFolder(work);

    const Run run = runCommand(work, QStringLiteral("repack"), args, {}, point);
    if (!committed) {
        QVERIFY2(run.status == 1,
            qPrintable(QStringLiteral("expected exit 1 (nothing changed), got %1: %2")
                           .arg(run.status)
                           .arg(QString::fromUtf8(run.out + run.err))));
        QCOMPARE(hashFolder(work), before);
        QCOMPARE(saveTempsIn(work), QStringList());
        LOAD_INTACT(after, model, fixture.bytes);
        QVERIFY(layoutOf(*after) == oldLayout);
        return;
    }
    QVERIFY2(run.status == 0,
        qPrintable(QStringLiteral("expected exit 0 (saved with a warning), got %1: %2")
                       .arg(run.status)
                       .arg(QString::fromUtf8(run.out + run.err))));
    const QString firstLine = QString::fromUtf8(run.out).section('\n', 0, 0);
    QVERIFY2(firstLine.contains(QStringLiteral("saved with a warning"), Qt::CaseInsensitive),
        qPrintable(QStringLiteral("stdout's first line: ") + firstLine));
    const Run verified = runCommand(work, QStringLiteral("verify"), {kModel});
    QVERIFY2(verified.status == 0, (verified.out + verified.err).constData());
    PYTHON_LOADS(model, values, QStringLiteral("after a failed ") + point);
    {
        LOAD_INTACT(after, model, fixture.bytes);
        const Layout got = finalLayout(layoutOf(*after));
        QVERIFY2(got == newLayout,
            ("not the new layout:\n" + layoutDiff(got, oldLayout, newLayout)).c_str());
    }

    // Housekeeping removes what the save could not, never what the model names.
    const Run cleaned = runCommand(work, QStringLiteral("clean"), {kModel});
    QVERIFY2(cleaned.status == 0, (cleaned.out + cleaned.err).constData());
    PYTHON_LOADS(model, values, QStringLiteral("after clean"));
    LOAD_INTACT(afterClean, model, fixture.bytes);
}

void TestCrashConsistency::randomKillsDuringInPlaceSaves()
{
    const int kills = qEnvironmentVariableIntValue("REPACK_CRASH_KILLS") > 0
        ? qEnvironmentVariableIntValue("REPACK_CRASH_KILLS")
        : 50;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString model = dir.filePath(kModel);
    QProcess generate;
    generate.start(QStringLiteral(REPACK_GENMODEL),
        {"-o", model, "--weights", "120M", "--storage", "external", "--seed", "7"});
    QVERIFY(generate.waitForFinished(120000));
    QVERIFY2(generate.exitCode() == 0, generate.readAllStandardError().constData());

    // One SHA-1 per tensor, from the generated model, before any save touches it.
    std::map<std::string, QByteArray> hashes;
    {
        auto loaded = repack::Model::load(model.toStdString());
        QVERIFY(loaded.ok());
        for (size_t i = 0; i < (*loaded)->tensors().size(); ++i) {
            auto bytes = (*loaded)->read(i);
            QVERIFY_OK(bytes);
            hashes[(*loaded)->tensors()[i].name] = sha1(bytes->bytes());
        }
        QVERIFY(hashes.size() > 10);
    }
    ValueHashes values; // what onnx's Python loader must read
    for (const auto& [name, hash] : hashes)
        values[QString::fromStdString(name)] = QString::fromLatin1(hash.toHex());
    const auto checkIntact = [&](Layout& layout) -> std::string {
        auto loaded = repack::Model::load(model.toStdString());
        if (!loaded)
            return loaded.error().message;
        std::string problems = verifyErrors(**loaded);
        if (hashes.size() != (*loaded)->tensors().size())
            problems += "tensor count changed\n";
        for (size_t i = 0; i < (*loaded)->tensors().size(); ++i) {
            const auto& name = (*loaded)->tensors()[i].name;
            auto bytes = (*loaded)->read(i);
            if (!bytes || !hashes.count(name) || sha1(bytes->bytes()) != hashes[name])
                problems += name + ": bytes differ from the original\n";
        }
        layout = finalLayout(layoutOf(**loaded));
        return problems;
    };

    // Two option sets whose layouts differ for every big tensor, so each save rewrites the
    // data; their layouts come from uninterrupted saves and are timed to pace the kills.
    const QList<QStringList> optionSets{
        {"--align", "0", "--order", "size"}, {"--align", "4096", "--order", "declaration"}};
    QList<Layout> layouts;
    qint64 saveMs = 0;
    for (const auto& options : optionSets) {
        QElapsedTimer timer;
        timer.start();
        const Run run = runCli(dir.path(), QStringList{kModel, "-o", kModel} + options);
        saveMs = std::max(saveMs, timer.elapsed());
        QVERIFY2(run.status == 0, run.err.constData());
        Layout layout;
        const std::string problems = checkIntact(layout);
        QVERIFY2(problems.empty(), problems.c_str());
        layouts << layout;
    }
    QVERIFY(layouts[0] != layouts[1]);
    int current = 1; // the last save used optionSets[1]

    const quint32 seed = qEnvironmentVariableIsSet("REPACK_CRASH_SEED")
        ? quint32(qEnvironmentVariableIntValue("REPACK_CRASH_SEED"))
        : QRandomGenerator::global()->generate();
    qInfo("random kills: seed %u (rerun with REPACK_CRASH_SEED=%u), %d kills within 0..%lld ms",
        seed, seed, kills, saveMs);
    QRandomGenerator random(seed);
    int beforeCommit = 0, afterCommit = 0, completed = 0;
    // Saves get faster than the timed ones when the machine gets quieter (the timing ran beside
    // other suites): each save that completes before its kill shrinks the window by a quarter.
    qint64 windowMs = saveMs;
    // Until `kills` SIGKILLs have landed during a save (a few land after it completed).
    for (int i = 0; beforeCommit + afterCommit < kills; ++i) {
        QVERIFY2(i < 3 * kills, "too many kills landed after the save had completed");
        const int next = 1 - current;
        QProcess process;
        process.start(qEnvironmentVariable("REPACK_CLI"),
            QStringList{"repack", model, "-o", model} + optionSets[next]);
        QVERIFY(process.waitForStarted());
        // Every other kill aims at the last 30% of a save, where the commit and the swap are.
        const auto delayMs = i % 2 ? windowMs * 7 / 10 + random.bounded(windowMs * 3 / 10 + 1)
                                   : random.bounded(windowMs + 1);
        QThread::msleep(static_cast<unsigned long>(delayMs));
        process.kill(); // SIGKILL
        QVERIFY(process.waitForFinished(120000));
        const bool killed = process.exitStatus() == QProcess::CrashExit;
        if (!killed) {
            QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
        }

        Layout layout;
        const std::string problems = checkIntact(layout);
        QVERIFY2(problems.empty(),
            qPrintable(QStringLiteral("kill %1 after %2 ms: %3")
                           .arg(i)
                           .arg(delayMs)
                           .arg(QString::fromStdString(problems))));
        PYTHON_LOADS(model, values, QStringLiteral("kill %1 after %2 ms").arg(i).arg(delayMs));
        const bool isNew = layout == layouts[next];
        QVERIFY2(isNew || layout == layouts[current],
            qPrintable(QStringLiteral("kill %1 after %2 ms: neither layout:\n%3")
                           .arg(i)
                           .arg(delayMs)
                           .arg(QString::fromStdString(
                               layoutDiff(layout, layouts[current], layouts[next])))));
        if (!killed)
            QVERIFY(isNew);
        (killed ? (isNew ? afterCommit : beforeCommit) : completed)++;
        if (!killed)
            windowMs = std::max<qint64>(1, windowMs * 3 / 4);
        if (isNew)
            current = next;
    }
    qInfo("random kills: %d landed mid-save (%d before the commit: old model, %d after: new "
          "model), %d after the save had completed",
        beforeCommit + afterCommit, beforeCommit, afterCommit, completed);

    const Run last
        = runCli(dir.path(), QStringList{kModel, "-o", kModel} + optionSets[1 - current]);
    QVERIFY2(last.status == 0, last.err.constData());
    Layout layout;
    const std::string problems = checkIntact(layout);
    QVERIFY2(problems.empty(), problems.c_str());
    QVERIFY(layout == layouts[1 - current]);
    const QStringList leftovers = tempLeftovers(dir.path());
    QVERIFY2(leftovers.isEmpty(), qPrintable(leftovers.join(", ")));
}

QTEST_APPLESS_MAIN(TestCrashConsistency)
#include "tst_crash_consistency.moc"
