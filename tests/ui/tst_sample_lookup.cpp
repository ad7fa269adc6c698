// Issue 36 item 6: `onnx-repack-gui` without a model opens the bundled sample found from where
// the executable is, never from the source path it was built from: resources/sample beside it
// (the build tree, where CMake copies it, or a copy of the executable with its resources) or
// the share folder of the prefix it is installed in. Runs the real executable ($REPACK_GUI)
// without a display, where it names the model it opens and prints `onnx-repack inspect` of it.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {

// What the executable at `exe`, started without a display or a model, says it opens.
QString openedBy(const QString& exe)
{
    QProcess gui;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
        env.remove(QString::fromLatin1(name));
    gui.setProcessEnvironment(env);
    gui.start(exe, {});
    if (!gui.waitForFinished(60000))
        return QStringLiteral("(did not finish)");
    const QString out = QString::fromLocal8Bit(gui.readAllStandardOutput());
    const QString said
        = out.section(QStringLiteral("`onnx-repack inspect "), 1).section(u'`', 0, 0);
    return said.isEmpty() ? out + QString::fromLocal8Bit(gui.readAllStandardError()) : said;
}

// Copies the executable to `to` (a folder made as needed), runnable.
bool copyExecutable(const QString& to)
{
    const QString exe = QDir(to).filePath(QFileInfo(QStringLiteral(REPACK_GUI)).fileName());
    return QDir().mkpath(to) && QFile::copy(QStringLiteral(REPACK_GUI), exe)
        && QFile::setPermissions(exe, QFile::permissions(exe) | QFile::ExeOwner);
}

// The bundled sample (model and data file) copied into `to`; its model's path.
QString copySample(const QString& to)
{
    const QString source = QFileInfo(QStringLiteral(REPACK_SAMPLE)).absolutePath();
    if (!QDir().mkpath(to))
        return {};
    for (const char* name : {"sample.onnx", "sample.onnx.data"})
        if (!QFile::copy(QDir(source).filePath(QString::fromLatin1(name)),
                QDir(to).filePath(QString::fromLatin1(name))))
            return {};
    return QFileInfo(QDir(to).filePath(QStringLiteral("sample.onnx"))).canonicalFilePath();
}

} // namespace

class TestSampleLookup : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // The build tree: CMake copied the sample beside the executable.
    void theBuildTreeOpensTheCopyBesideTheExecutable()
    {
        const QString beside = QFileInfo(QStringLiteral(REPACK_GUI))
                                   .dir()
                                   .filePath(QStringLiteral("resources/sample/sample.onnx"));
        QVERIFY2(QFileInfo(beside).isFile(), qPrintable(beside));
        QCOMPARE(openedBy(QStringLiteral(REPACK_GUI)), QFileInfo(beside).canonicalFilePath());
    }

    // The executable copied elsewhere with a resources folder beside it.
    void aCopyOpensTheSampleBesideIt()
    {
        QTemporaryDir dir;
        const QString app = dir.filePath(QStringLiteral("app"));
        QVERIFY(copyExecutable(app));
        const QString sample = copySample(QDir(app).filePath(QStringLiteral("resources/sample")));
        QVERIFY(!sample.isEmpty());
        QCOMPARE(openedBy(QDir(app).filePath(QStringLiteral("onnx-repack-gui"))), sample);
    }

    // The installed layout, in whatever prefix: bin/onnx-repack-gui and
    // share/onnx-repack/sample/.
    void anInstallOpensItsSharedSample()
    {
        QTemporaryDir prefix;
        QVERIFY(copyExecutable(prefix.filePath(QStringLiteral("bin"))));
        const QString sample
            = copySample(prefix.filePath(QStringLiteral("share/onnx-repack/sample")));
        QVERIFY(!sample.isEmpty());
        QCOMPARE(openedBy(prefix.filePath(QStringLiteral("bin/onnx-repack-gui"))), sample);
    }
};

QTEST_MAIN(TestSampleLookup)
#include "tst_sample_lookup.moc"
