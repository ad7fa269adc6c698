// Every model of Debian's ONNX test data (libonnx-testdata) opens, and our tensor index agrees
// with an independent count made by python3-onnx (crosscheck.py): per file, the number of
// tensors and the inline and external byte totals.
#include "core/model/model.h"
#include "tests/support/result_checks.h"

#include <QDirIterator>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

using namespace repack;

namespace {
const QString kDataDir = QStringLiteral(REPACK_TESTDATA_DIR);
}

class TestTestdataCrosscheck : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void everyModelAgrees();

private:
    QJsonObject m_expected; // relative path -> {tensors, inline_bytes, external_bytes}
};

void TestTestdataCrosscheck::initTestCase()
{
    if (!QFileInfo(kDataDir).isDir())
        QSKIP("libonnx-testdata is not installed");
    QProcess python;
    python.start(qEnvironmentVariable("REPACK_PYTHON", "/usr/bin/python3"),
        {QStringLiteral(REPACK_CROSSCHECK_SCRIPT), kDataDir});
    QVERIFY(python.waitForFinished(120000));
    QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
    QJsonParseError error;
    const auto doc = QJsonDocument::fromJson(python.readAllStandardOutput(), &error);
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
    m_expected = doc.object()["files"].toObject();
}

void TestTestdataCrosscheck::everyModelAgrees()
{
    // The python side must have seen exactly the files we find.
    QStringList found;
    QDirIterator it(kDataDir, {"*.onnx"}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        found << QDir(kDataDir).relativeFilePath(it.next());
    found.sort();
    QStringList expectedFiles = m_expected.keys();
    expectedFiles.sort();
    QCOMPARE(found, expectedFiles);
    QVERIFY(found.size() > 1000);

    int mismatches = 0;
    qint64 tensors = 0;
    for (const QString& rel : found) {
        const QJsonObject want = m_expected[rel].toObject();
        QVERIFY2(
            !want.contains("error"), qPrintable(rel + ": python: " + want["error"].toString()));
        auto model = Model::load(QDir(kDataDir).filePath(rel).toStdString());
        QVERIFY_OK(model);
        uint64_t inlineBytes = 0, externalBytes = 0;
        for (const auto& t : (*model)->tensors())
            (t.isExternal() ? externalBytes : inlineBytes) += t.byteSize();
        const qint64 count = qint64((*model)->tensors().size());
        tensors += count;
        if (count != want["tensors"].toInteger()
            || qint64(inlineBytes) != want["inline_bytes"].toInteger()
            || qint64(externalBytes) != want["external_bytes"].toInteger()) {
            ++mismatches;
            qWarning("%s: ours %lld tensors, %llu inline, %llu external; python %lld, %lld, %lld",
                qPrintable(rel), count, (unsigned long long)inlineBytes,
                (unsigned long long)externalBytes, want["tensors"].toInteger(),
                want["inline_bytes"].toInteger(), want["external_bytes"].toInteger());
        }
    }
    qInfo("%lld models, %lld tensors compared", qint64(found.size()), tensors);
    QCOMPARE(mismatches, 0);
}

QTEST_APPLESS_MAIN(TestTestdataCrosscheck)
#include "tst_testdata_crosscheck.moc"
