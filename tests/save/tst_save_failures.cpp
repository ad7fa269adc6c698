// A failed save changes nothing: the original .onnx and data files stay byte-identical (hashed
// before and after), no temporaries are left, the message names what failed, and the
// in-memory model is exactly as before and still readable.
#include "core/inspect/verify.h"
#include "core/model/model.h"
#include "core/save/external_data.h"
#include "core/save/save.h"
#include "core/save/save_conflicts.h"
#include "core/save/temp_file.h"
#include "core/save_lock.h"
#include "tests/support/result_checks.h"
#include "tests/support/save_fixtures.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <onnx/onnx_pb.h>

#include <csignal>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace repack;
using namespace fixtures;

namespace {

constexpr uint64_t MiB = 1 << 20;
const std::vector<uint64_t> kSizes{100, 2000, 3 * MiB, 3000, 64};

// What must not change: every file of the folder, and the model as the process holds it.
struct Before {
    QMap<QString, QByteArray> files;
    std::string proto;
    std::string path;
    std::map<std::string, std::string> tensors;
};

Before capture(const QString& dir, const Model& model)
{
    return {hashFolder(dir), model.proto().SerializeAsString(), model.path().string(),
        readAllTensors(model)};
}

// Makes `dir` refuse new entries: 0555 for ordinary users; for root, which ignores permissions,
// the file system's immutable flag (chattr +i). Returns false when neither is possible.
bool lockFolder(const QString& dir, bool locked)
{
    if (::geteuid() != 0) {
        const auto rx = QFile::ReadOwner | QFile::ExeOwner | QFile::ReadGroup | QFile::ExeGroup
            | QFile::ReadOther | QFile::ExeOther;
        return QFile::setPermissions(dir, locked ? rx : rx | QFile::WriteOwner);
    }
    const int fd = ::open(QFile::encodeName(dir).constData(), O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return false;
    int flags = 0;
    bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
    flags = locked ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
    ok = ok && ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
    ::close(fd);
    return ok;
}

bool contains(const std::string& text, const QString& part)
{
    return text.find(part.toStdString()) != std::string::npos;
}

} // namespace

// Checks everything `before` promised; `readable` is false when the test broke the data itself.
#define QVERIFY_UNTOUCHED(dir, model, before, readable)                                            \
    do {                                                                                           \
        QCOMPARE(hashFolder(dir), (before).files);                                                 \
        QCOMPARE(saveTempsIn(dir), QStringList());                                                 \
        QCOMPARE((model).proto().SerializeAsString(), (before).proto);                             \
        QCOMPARE((model).path().string(), (before).path);                                          \
        if (readable)                                                                              \
            QCOMPARE(readAllTensors(model), (before).tensors);                                     \
    } while (false)

class TestSaveFailures : public QObject {
    Q_OBJECT
private slots:
    void aChangedModelIsTriedAgainOnlyWhenItCanBeReadAgain();
    void diskFullInProcess();
    void diskFullCli_data();
    void diskFullCli();
    void unwritableTarget_data();
    void unwritableTarget();
    void cancelHalfway();
    void sourceTruncatedUnderneath_data();
    void sourceTruncatedUnderneath();
    void unreferencedDataFileNeedsForce();
    void sourceRewrittenInPlaceIsNotRead_data();
    void sourceRewrittenInPlaceIsNotRead();
    void secondSaveOfFolderWaitsForLock();
    void unloadNeedsConsentForForeignFile();
    void convertToExternalNeedsConsentForForeignFile();
    void faultAfterCommitIsWarningWithLoadableModel_data();
    void faultAfterCommitIsWarningWithLoadableModel();
    void uncommittedModelCopyLeftIsWarning();
    void faultAtCommitChangesNothing();
    void dataPathOutsideFolder_data();
    void dataPathOutsideFolder();
};

void TestSaveFailures::diskFullInProcess()
{
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    const Before before = capture(dir.path(), *model);

    // A file size limit below the 3 MiB tensor: writes past it fail with EFBIG, as on a full
    // disk. SIGXFSZ is ignored so the write fails instead of killing the test.
    rlimit old{};
    QCOMPARE(::getrlimit(RLIMIT_FSIZE, &old), 0);
    auto* previous = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limited = old;
    limited.rlim_cur = MiB;
    QCOMPARE(::setrlimit(RLIMIT_FSIZE, &limited), 0);
    auto result = save(*model, path.toStdString(), SaveOptions{});
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, previous);

    QVERIFY(!result.ok());
    QVERIFY2(contains(result.error().message, dir.path()), result.error().message.c_str());
    QVERIFY2(contains(result.error().message, "large"), result.error().message.c_str());
    QVERIFY_UNTOUCHED(dir.path(), *model, before, true);
}

void TestSaveFailures::diskFullCli_data()
{
    QTest::addColumn<QString>("output"); // relative to the folder; "" = in place
    QTest::newRow("in place") << "";
    QTest::newRow("save as beside it") << "copy.onnx";
}

void TestSaveFailures::diskFullCli()
{
    QFETCH(QString, output);
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    const auto before = hashFolder(dir.path());
    const QString out = output.isEmpty() ? path : dir.filePath(output);

    QProcess process;
    // Runs in the child between fork and exec: only async-signal-safe calls.
    process.setChildProcessModifier([] {
        rlimit limit{};
        ::getrlimit(RLIMIT_FSIZE, &limit);
        limit.rlim_cur = MiB;
        ::setrlimit(RLIMIT_FSIZE, &limit);
    });
    process.start(qEnvironmentVariable("REPACK_CLI"), {"repack", path, "-o", out});
    QVERIFY(process.waitForFinished(60000));
    QCOMPARE(process.exitStatus(), QProcess::NormalExit); // not killed by SIGXFSZ
    QCOMPARE(process.exitCode(), 1);
    const QString err = QString::fromUtf8(process.readAllStandardError());
    QVERIFY2(err.contains(dir.path()), qPrintable(err));
    QCOMPARE(err.trimmed().count('\n'), 0); // one line
    QCOMPARE(hashFolder(dir.path()), before);
    QCOMPARE(saveTempsIn(dir.path()), QStringList());
    auto model = loadModel(path);
    QVERIFY(model);
    QCOMPARE(readAllTensors(*model).size(), kSizes.size());
}

void TestSaveFailures::unwritableTarget_data()
{
    QTest::addColumn<QString>("how");
    QTest::newRow("in place, read-only folder") << "read-only source";
    QTest::newRow("save as into a read-only folder") << "read-only target";
    QTest::newRow("save as through a regular file") << "through a file";
}

void TestSaveFailures::unwritableTarget()
{
    QFETCH(QString, how);
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir("src") && QDir(dir.path()).mkdir("out"));
    const QString src = dir.filePath("src");
    const QString path = writeUint8Model(src, "m.onnx", kSizes, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    QString out = dir.filePath("out/m.onnx");
    QString lockedDir;
    if (how == "read-only source") {
        out = path;
        lockedDir = src;
    } else if (how == "read-only target") {
        lockedDir = dir.filePath("out");
    } else {
        QFile file(dir.filePath("plain.txt"));
        QVERIFY(file.open(QIODevice::WriteOnly));
        out = dir.filePath("plain.txt/m.onnx");
    }
    const Before before = capture(src, *model);
    if (!lockedDir.isEmpty() && !lockFolder(lockedDir, true))
        QSKIP("root, and this file system has no immutable flag to make a folder read-only");
    auto result = save(*model, out.toStdString(), SaveOptions{});
    if (!lockedDir.isEmpty())
        QVERIFY(lockFolder(lockedDir, false));

    QVERIFY(!result.ok());
    QVERIFY2(
        contains(result.error().message, QFileInfo(out).path()), result.error().message.c_str());
    QVERIFY_UNTOUCHED(src, *model, before, true);
    QCOMPARE(QDir(dir.filePath("out")).entryList(QDir::Files | QDir::Hidden), QStringList());
}

void TestSaveFailures::cancelHalfway()
{
    QTemporaryDir dir;
    // 200 MiB is copied in several chunks, so there is a "halfway" to cancel at.
    const QString path
        = writeUint8Model(dir.path(), "m.onnx", {2000, 200 * MiB, 3000}, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    const Before before = capture(dir.path(), *model);

    CancelToken cancel;
    uint64_t cancelledAt = 0;
    SaveOptions options;
    options.cancel = &cancel;
    options.progress = [&](const Progress& p) {
        if (!cancel.isCancelled() && p.bytesDone >= p.bytesTotal / 2) {
            cancelledAt = p.bytesDone;
            cancel.cancel();
        }
    };
    auto result = save(*model, path.toStdString(), options);
    QVERIFY(!result.ok());
    QVERIFY(cancelledAt > 0);
    QVERIFY(cancelledAt < 2000 + 200 * MiB + 3000); // really halfway, not at the end
    QVERIFY2(contains(result.error().message, "cancel"), result.error().message.c_str());
    QVERIFY_UNTOUCHED(dir.path(), *model, before, true);
}

void TestSaveFailures::sourceTruncatedUnderneath_data()
{
    QTest::addColumn<bool>("inPlace");
    QTest::newRow("in place") << true;
    QTest::newRow("save as") << false;
}

void TestSaveFailures::sourceTruncatedUnderneath()
{
    QFETCH(bool, inPlace);
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    // Another process cuts the data file in half after the model was opened.
    const QString data = dir.filePath("m.onnx.data");
    QVERIFY(QFile::resize(data, QFileInfo(data).size() / 2));
    const Before before = capture(dir.path(), *model);

    const QString out = inPlace ? path : dir.filePath("copy.onnx");
    auto result = save(*model, out.toStdString(), SaveOptions{});
    QVERIFY(!result.ok());
    QVERIFY2(contains(result.error().message, data), result.error().message.c_str());
    QVERIFY_UNTOUCHED(dir.path(), *model, before, false);
    QVERIFY(!QFile::exists(dir.filePath("copy.onnx")));
}

void TestSaveFailures::unreferencedDataFileNeedsForce()
{
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    // Another model's weights, in the file this save is asked to write.
    QFile other(dir.filePath("other.data"));
    QVERIFY(other.open(QIODevice::WriteOnly));
    other.write(QByteArray(5000, 'x'));
    other.close();
    auto model = loadModel(path);
    QVERIFY(model);
    const Before before = capture(dir.path(), *model);

    SaveOptions options;
    options.dataFile = "other.data";
    auto conflicts = saveConflicts(*model, path.toStdString(), options);
    QVERIFY(conflicts.ok());
    QCOMPARE(conflicts->size(), size_t(1));
    QCOMPARE(
        conflicts->front().file, std::filesystem::path(dir.filePath("other.data").toStdString()));
    QVERIFY(conflicts->front().users.empty()); // no model uses it: still not ours to replace
    auto refused = save(*model, path.toStdString(), options);
    QVERIFY(!refused.ok());
    QVERIFY2(contains(refused.error().message, dir.filePath("other.data")),
        refused.error().message.c_str());
    QVERIFY2(contains(refused.error().message, "--force"), refused.error().message.c_str());
    QVERIFY_UNTOUCHED(dir.path(), *model, before, true);

    options.force = true;
    auto forced = save(*model, path.toStdString(), options);
    QVERIFY_OK(forced);
    QVERIFY(fileContents(dir.filePath("other.data")) != QByteArray(5000, 'x'));
    auto reloaded = loadModel(path);
    QVERIFY(reloaded);
    QCOMPARE(readAllTensors(*reloaded), before.tensors);
    for (const auto& t : reloaded->tensors())
        if (t.isExternal())
            QCOMPARE(t.external->location(), std::string("other.data"));
}

void TestSaveFailures::dataPathOutsideFolder_data()
{
    QTest::addColumn<QString>("dataFile"); // "@" stands for the test's folder
    QTest::newRow("absolute") << "@/elsewhere/x.data";
    QTest::newRow("parent folder") << "../x.data";
    QTest::newRow("escapes through a subfolder") << "sub/../../x.data";
}

void TestSaveFailures::dataPathOutsideFolder()
{
    QFETCH(QString, dataFile);
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath("model/sub") && QDir(dir.path()).mkdir("elsewhere"));
    const QString modelDir = dir.filePath("model");
    const QString path = writeUint8Model(modelDir, "m.onnx", kSizes, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    const Before before = capture(modelDir, *model);

    SaveOptions options;
    options.dataFile = dataFile.replace("@", dir.path()).toStdString();
    auto result = save(*model, path.toStdString(), options);
    QVERIFY(!result.ok());
    QVERIFY2(contains(result.error().message, dataFile), result.error().message.c_str());
    QVERIFY_UNTOUCHED(modelDir, *model, before, true);
    QVERIFY(!QFile::exists(dir.filePath("x.data")));
    QCOMPARE(QDir(dir.filePath("elsewhere")).entryList(QDir::Files | QDir::Hidden), QStringList());
}

// The one retry of the front ends (saveRetrying): a model changed by another save is read
// again and saved, up to kSaveAttempts tries; nothing else is tried twice, and a model with no
// path to read again is not.
void TestSaveFailures::aChangedModelIsTriedAgainOnlyWhenItCanBeReadAgain()
{
    std::vector<bool> calls;
    int retries = 0;
    auto failing = [&](ErrorKind kind, int failures) {
        calls.clear();
        retries = 0;
        return [&, kind, failures](bool again) -> Result<SaveReport> {
            calls.push_back(again);
            if (int(calls.size()) <= failures)
                return Error{"changed meanwhile", kind};
            return SaveReport{};
        };
    };
    auto count = [&] { ++retries; };
    QVERIFY(saveRetrying(failing(ErrorKind::Changed, 2), true, count).ok());
    QCOMPARE(calls, (std::vector<bool>{false, true, true}));
    QCOMPARE(retries, 2);
    auto gaveUp = saveRetrying(failing(ErrorKind::Changed, 100), true, count);
    QVERIFY(!gaveUp && gaveUp.error().is(ErrorKind::Changed));
    QCOMPARE(int(calls.size()), kSaveAttempts);
    QVERIFY(!saveRetrying(failing(ErrorKind::Changed, 1), false, count).ok());
    QCOMPARE(calls.size(), size_t(1));
    QVERIFY(!saveRetrying(failing(ErrorKind::Busy, 1), true, count).ok());
    QCOMPARE(calls.size(), size_t(1));
    QCOMPARE(retries, 0);
}

QTEST_GUILESS_MAIN(TestSaveFailures)
// SPEC 5a identity: a data file rewritten by another program after the model was opened, same
// size, other bytes (same inode, new mtime) must never be read at the old offsets, by save or
// verify: the GUI's "reload? No" then Save As wrote the new file's bytes before.
void TestSaveFailures::sourceRewrittenInPlaceIsNotRead_data()
{
    QTest::addColumn<bool>("replace"); // a new file under the name, or the old one rewritten
    QTest::newRow("rewritten in place") << false;
    QTest::newRow("replaced by another file") << true;
}

void TestSaveFailures::sourceRewrittenInPlaceIsNotRead()
{
    QFETCH(bool, replace);
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    const QString data = dir.filePath("m.onnx.data");
    const qint64 size = QFileInfo(data).size();
    QTest::qWait(20); // a later mtime, even on coarse clocks
    if (replace) {
        QVERIFY(QFile::remove(data));
    }
    QFile file(data);
    QVERIFY(file.open(replace ? QIODevice::WriteOnly : QIODevice::ReadWrite));
    QVERIFY(file.write(QByteArray(size, 'z')) == size);
    file.close();
    const Before before = capture(dir.path(), *model);

    QTemporaryDir other;
    const QString out = other.filePath("copy.onnx");
    auto result = save(*model, out.toStdString(), SaveOptions{});
    QVERIFY(!result.ok());
    QVERIFY2(contains(result.error().message, data), result.error().message.c_str());
    QVERIFY2(contains(result.error().message, "changed"), result.error().message.c_str());
    QCOMPARE(QDir(other.path()).entryList(QDir::Files | QDir::Hidden), QStringList());
    QCOMPARE(hashFolder(dir.path()), before.files);
    QCOMPARE(model->proto().SerializeAsString(), before.proto);

    const auto problems = verify(*model, VerifyOptions{});
    QVERIFY(std::any_of(problems.begin(), problems.end(),
        [](const Problem& p) { return p.severity == Severity::Error; }));
    for (size_t i = 0; i < model->tensors().size(); ++i)
        if (model->tensors()[i].isExternal())
            // never the new bytes at the old offsets
            QVERIFY_FAILS_WITH(model->read(i), model->tensors()[i].qualifiedName());
}

// SPEC 5a: one save at a time. A save of a folder another save holds fails after its wait with
// a message naming the folder, and writes nothing; it goes through once the lock is free.
void TestSaveFailures::secondSaveOfFolderWaitsForLock()
{
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    const Before before = capture(dir.path(), *model);
    {
        auto held = FolderLock::acquire({dir.path().toStdString()}, 0);
        QVERIFY(held.ok());
        QVERIFY(FolderLock::isHeld(dir.path().toStdString()));
        SaveOptions options;
        options.lockWaitMs = 100;
        QElapsedTimer clock;
        clock.start();
        auto busy = save(*model, path.toStdString(), options);
        QVERIFY(!busy.ok());
        QVERIFY(clock.elapsed() >= 90);
        QVERIFY2(contains(busy.error().message, "another save"), busy.error().message.c_str());
        QVERIFY_UNTOUCHED(dir.path(), *model, before, true);
    }
    QVERIFY(!FolderLock::isHeld(dir.path().toStdString()));
    QVERIFY_OK(save(*model, path.toStdString(), SaveOptions{}));
    QCOMPARE(readAllTensors(*model), before.tensors);
}

// SPEC 4 + 5: the external-data operations replace a file only when the model reads it itself.
void TestSaveFailures::unloadNeedsConsentForForeignFile()
{
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    QFile other(dir.filePath("other.data"));
    QVERIFY(other.open(QIODevice::WriteOnly));
    other.write(QByteArray(5000, 'x'));
    other.close();
    auto model = loadModel(path);
    QVERIFY(model);
    const Before before = capture(dir.path(), *model);
    auto refused = unloadFromModel(*model, dir.path().toStdString(), "other.data", 1024);
    QVERIFY(!refused.ok());
    QVERIFY2(contains(refused.error().message, dir.filePath("other.data")),
        refused.error().message.c_str());
    QVERIFY_UNTOUCHED(dir.path(), *model, before, true);

    SaveOptions force;
    force.force = true;
    QVERIFY_OK(unloadFromModel(*model, dir.path().toStdString(), "other.data", 1024, force));
    QCOMPARE(readAllTensors(*model), before.tensors);
}

void TestSaveFailures::convertToExternalNeedsConsentForForeignFile()
{
    QTemporaryDir dir;
    QFile other(dir.filePath("w.bin"));
    QVERIFY(other.open(QIODevice::WriteOnly));
    other.write(QByteArray(64, 'x'));
    other.close();
    std::vector<onnx::TensorProto> tensors(1);
    tensors[0].set_name("t");
    tensors[0].set_data_type(2);
    tensors[0].add_dims(4096);
    tensors[0].set_raw_data(tensorContent(0, 4096));
    auto refused = convertTensorsToExternal(tensors, dir.path().toStdString(), "w.bin");
    QVERIFY_FAILS_WITH(refused, "w.bin");
    QVERIFY(refused.error().is(ErrorKind::ConsentNeeded));
    QCOMPARE(fileContents(dir.filePath("w.bin")), QByteArray(64, 'x'));
    SaveOptions force;
    force.force = true;
    auto forced = convertTensorsToExternal(tensors, dir.path().toStdString(), "w.bin", force);
    QVERIFY_OK(forced);
    QCOMPARE(fileContents(dir.filePath("w.bin")).toStdString(), tensorContent(0, 4096));
}

// The model's final copy is removed when its rename failed; when that removal fails too, the
// save says so instead of leaving a copy silently.
void TestSaveFailures::uncommittedModelCopyLeftIsWarning()
{
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    SaveOptions options;
    options.threshold = 1; // a layout change, so the data goes through temporary names
    qputenv("ONNX_REPACK_FAIL_AT", "rename-model-final,unlink-model-temp");
    auto report = save(*model, path.toStdString(), options);
    qunsetenv("ONNX_REPACK_FAIL_AT");
    QVERIFY_OK(report);
    const bool said = std::any_of(report->warnings.begin(), report->warnings.end(),
        [](const std::string& w) { return w.find("never committed") != std::string::npos; });
    QVERIFY2(said, report->warnings.empty() ? "no warning" : report->warnings.back().c_str());
    QVERIFY(loadModel(path));
}

// SPEC 5a: after the commit point nothing committed is deleted; a failed step is a warning and
// the model on disk (and in memory) is the new one, complete.
void TestSaveFailures::faultAfterCommitIsWarningWithLoadableModel_data()
{
    QTest::addColumn<QByteArray>("fault");
    QTest::addColumn<bool>("temporaryNames"); // the saved model names its data by temp names
    QTest::newRow("folder fsync") << QByteArray("fsync-dir") << false;
    QTest::newRow("no hard links") << QByteArray("link-data") << true;
    QTest::newRow("data rename") << QByteArray("rename-data") << true;
    QTest::newRow("final model rename") << QByteArray("rename-model-final") << true;
    QTest::newRow("temporary unlink") << QByteArray("unlink-temp") << false;
}

void TestSaveFailures::faultAfterCommitIsWarningWithLoadableModel()
{
    QFETCH(QByteArray, fault);
    QFETCH(bool, temporaryNames);
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    const auto expected = readAllTensors(*model);
    qputenv("ONNX_REPACK_FAIL_AT", fault);
    auto report = save(*model, path.toStdString(), SaveOptions{});
    qunsetenv("ONNX_REPACK_FAIL_AT");
    QVERIFY_OK(report);
    QVERIFY(!report->warnings.empty());
    QCOMPARE(readAllTensors(*model), expected);
    auto reloaded = loadModel(path);
    QVERIFY(reloaded);
    QVERIFY(!reloaded->hasErrors());
    QCOMPARE(readAllTensors(*reloaded), expected);
    QCOMPARE(reloaded->proto().SerializeAsString(), model->proto().SerializeAsString());
    bool namesTemp = false;
    for (const auto& t : reloaded->tensors())
        namesTemp |= t.isExternal() && isTempName(t.external->location());
    QCOMPARE(namesTemp, temporaryNames);
    // A second save finishes the job: final names, no temporaries left.
    QVERIFY_OK(save(*reloaded, path.toStdString(), SaveOptions{}));
    QCOMPARE(saveTempsIn(dir.path()), QStringList());
    QCOMPARE(readAllTensors(*loadModel(path)), expected);
}

void TestSaveFailures::faultAtCommitChangesNothing()
{
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    const Before before = capture(dir.path(), *model);
    qputenv("ONNX_REPACK_FAIL_AT", "rename-model-temp");
    SaveOptions options;
    options.alignment = 0;
    auto result = save(*model, path.toStdString(), options);
    qunsetenv("ONNX_REPACK_FAIL_AT");
    QVERIFY_FAILS_WITH(result, "(injected)");
    QVERIFY_UNTOUCHED(dir.path(), *model, before, true);
}

#include "tst_save_failures.moc"
