// A mapped file that shrinks underneath raises SIGBUS on the next touch of a page past its new
// end. readMapped (core/mapped_memory.h) turns that into an error naming the file; the process
// lives on, later reads work, and a SIGBUS outside readMapped still ends the process as before.
#include "core/inspect/diff.h"
#include "core/mapped_memory.h"
#include "core/model/model.h"
#include "tests/support/save_fixtures.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace repack;
using namespace fixtures;

class TestMappedMemory : public QObject {
    Q_OBJECT

private slots:
    void truncatedMappingIsAnErrorNotADeadProcess();
    void nestedAndRepeatedReadsKeepWorking();
    void viewOfATruncatedDataFileFailsTheCompare();
    void busErrorOutsideAGuardStillKills();
};

void TestMappedMemory::truncatedMappingIsAnErrorNotADeadProcess()
{
    QTemporaryDir dir;
    const QString path = dir.path() + "/w.data";
    const std::string bytes = tensorContent(1, 1 << 20);
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes.data(), qint64(bytes.size()));
    }
    const int fd = ::open(path.toLocal8Bit().constData(), O_RDONLY);
    QVERIFY(fd >= 0);
    void* base = ::mmap(nullptr, bytes.size(), PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    QVERIFY(base != MAP_FAILED);
    QVERIFY(::truncate(path.toLocal8Bit().constData(), 0) == 0);

    std::vector<char> copy(bytes.size());
    Status s = readMapped("graph/w (in " + path.toStdString() + ")",
        [&] { std::memcpy(copy.data(), base, copy.size()); });
    ::munmap(base, bytes.size());
    QVERIFY(!s);
    const QString message = QString::fromStdString(s.error().message);
    QVERIFY2(message.contains("graph/w") && message.contains("w.data")
            && message.contains("shrank or changed"),
        qPrintable(message));
}

void TestMappedMemory::nestedAndRepeatedReadsKeepWorking()
{
    QTemporaryDir dir;
    const QString path = dir.path() + "/w.data";
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray(1 << 16, 'x'));
    f.close();
    const int fd = ::open(path.toLocal8Bit().constData(), O_RDONLY);
    void* base = ::mmap(nullptr, 1 << 16, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    QVERIFY(base != MAP_FAILED);
    QVERIFY(::truncate(path.toLocal8Bit().constData(), 4096) == 0);
    const auto* p = static_cast<const volatile char*>(base);
    for (int round = 0; round < 3; ++round) {
        char first = 0;
        // The inner read faults; the outer one goes on and reads the page that is still there.
        Status inner;
        Status outer = readMapped("outer", [&] {
            first = p[0];
            inner = readMapped("inner", [&] { (void)p[8192]; });
        });
        QVERIFY(outer);
        QCOMPARE(first, 'x');
        QVERIFY(!inner);
        QVERIFY(QString::fromStdString(inner.error().message).startsWith("inner:"));
    }
    ::munmap(base, 1 << 16);
}

// Through the core: a view handed out before the file shrank faults in the compare.
void TestMappedMemory::viewOfATruncatedDataFileFailsTheCompare()
{
    QTemporaryDir dir;
    const QString a = writeUint8Model(dir.path(), "a.onnx", {1 << 20, 1 << 20}, 1024, "a.data");
    const QString b = writeUint8Model(dir.path(), "b.onnx", {1 << 20, 1 << 20}, 1024, "b.data");
    auto ma = loadModel(a);
    auto mb = loadModel(b);
    QVERIFY(ma && mb);
    auto view = ma->read(0);
    QVERIFY(view);
    QVERIFY(::truncate((dir.path() + "/a.data").toLocal8Bit().constData(), 0) == 0);
    const auto bytes = view->bytes();
    uint64_t sum = 0;
    Status s = readMapped(view->where(ma->tensors()[0]), [&] {
        for (size_t i = 0; i < bytes.size(); i += 4096)
            sum += static_cast<uint8_t>(bytes[i]);
    });
    QVERIFY(!s);
    QVERIFY2(
        QString::fromStdString(s.error().message).contains("a.data"), s.error().message.c_str());
    // A later diff sees the changed file before mapping anything and says so.
    auto diff = diffModels(*ma, *mb, {});
    QVERIFY(!diff);
    QVERIFY2(QString::fromStdString(diff.error().message).contains("a.data"),
        diff.error().message.c_str());
}

void TestMappedMemory::busErrorOutsideAGuardStillKills()
{
    if (qEnvironmentVariableIsSet("REPACK_MAPPED_CHILD")) {
        // The child: a read that faults inside a guard first (installing the handler), then an
        // unguarded one, which must end the process with SIGBUS as it would without us.
        QTemporaryDir dir;
        const QString path = dir.path() + "/w.data";
        QFile f(path);
        (void)f.open(QIODevice::WriteOnly);
        f.write(QByteArray(1 << 16, 'x'));
        f.close();
        const int fd = ::open(path.toLocal8Bit().constData(), O_RDONLY);
        void* base = ::mmap(nullptr, 1 << 16, PROT_READ, MAP_SHARED, fd, 0);
        (void)::truncate(path.toLocal8Bit().constData(), 0);
        const auto* p = static_cast<const volatile char*>(base);
        (void)readMapped("guarded", [&] { (void)p[0]; });
        (void)p[4096];
        ::_exit(0);
    }
    QProcess child;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("REPACK_MAPPED_CHILD", "1");
    env.insert("QTEST_DISABLE_STACK_DUMP", "1"); // Qt Test would run gdb on the crash
    // A sanitizer's own SIGBUS handler would report and exit instead of dying by the signal.
    env.insert("ASAN_OPTIONS", "handle_sigbus=0");
    child.setProcessEnvironment(env);
    child.start(QCoreApplication::applicationFilePath(), {"busErrorOutsideAGuardStillKills"});
    QVERIFY(child.waitForFinished(60000));
    QCOMPARE(child.exitStatus(), QProcess::CrashExit);
}

QTEST_GUILESS_MAIN(TestMappedMemory)
#include "tst_mapped_memory.moc"
