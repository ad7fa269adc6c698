// Interop with onnx's own Python reader (SPEC section 5): every output of `onnx-repack repack`
// passes onnx.checker.check_model and loads through onnx.load with the source's tensor values
// (interop.py), and every model of Debian's ONNX test data that holds tensors round-trips to
// external data at threshold 0 and back inline, byte-exact.
#include "core/model/model.h"
#include "tests/support/crash_fixtures.h"
#include "tests/support/model_builder.h"

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>

using namespace fixtures;

namespace {

const QString kTestData = QStringLiteral("/usr/share/libonnx-testdata/data");

struct Run {
    int exitCode = -1;
    QByteArray out;
};

Run run(const QString& program, const QStringList& args)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, args);
    Run result;
    if (process.waitForFinished(240000) && process.exitStatus() == QProcess::NormalExit)
        result.exitCode = process.exitCode();
    result.out = process.readAll();
    return result;
}

Run runRepack(const QStringList& args)
{
    return run(qEnvironmentVariable("REPACK_CLI"), QStringList{"repack"} + args);
}

// Runs interop.py over "source<TAB>output<TAB>expectations" lines.
Run interop(const QString& listPath)
{
    return run(
        qEnvironmentVariable("REPACK_PYTHON"), {QStringLiteral(REPACK_INTEROP_SCRIPT), listPath});
}

bool writeList(const QString& path, const QStringList& lines)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(lines.join('\n').toUtf8()) >= 0;
}

// Differences between the tensors of two models, read through repack::Model::read.
QString compareModels(const repack::Model& a, const repack::Model& b)
{
    if (a.tensors().size() != b.tensors().size())
        return QStringLiteral("%1 tensors became %2")
            .arg(a.tensors().size())
            .arg(b.tensors().size());
    for (size_t i = 0; i < a.tensors().size(); ++i) {
        const auto& ta = a.tensors()[i];
        const QString name = QString::fromStdString(ta.qualifiedName());
        if (ta.qualifiedName() != b.tensors()[i].qualifiedName())
            return name + " became " + QString::fromStdString(b.tensors()[i].qualifiedName());
        if (ta.dataType == 8) { // strings have no byte image: compare the values themselves
            if (ta.proto->string_data().size() != b.tensors()[i].proto->string_data().size()
                || !std::equal(ta.proto->string_data().begin(), ta.proto->string_data().end(),
                    b.tensors()[i].proto->string_data().begin()))
                return name + ": strings differ";
            continue;
        }
        auto x = a.read(i);
        auto y = b.read(i);
        if (!x || !y)
            return name + ": " + QString::fromStdString((x ? y : x).error().message);
        const auto bx = x->bytes(), by = y->bytes();
        if (!std::equal(bx.begin(), bx.end(), by.begin(), by.end()))
            return name + ": bytes differ";
    }
    return {};
}

} // namespace

class TestInterop : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cliOutputReadsInOnnx_data();
    void cliOutputReadsInOnnx();
    void testDataRoundTrip();
};

void TestInterop::initTestCase()
{
    QVERIFY2(QFileInfo(qEnvironmentVariable("REPACK_CLI")).isExecutable(),
        "REPACK_CLI must name the onnx-repack executable");
    QVERIFY2(run(qEnvironmentVariable("REPACK_PYTHON"), {"-c", "import onnx, numpy"}).exitCode == 0,
        "REPACK_PYTHON must be a python3 with onnx (Debian's python3-onnx)");
}

void TestInterop::cliOutputReadsInOnnx_data()
{
    QTest::addColumn<bool>("externalSource");
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("expect"); // interop.py expectations on the output's storage

    struct Combo {
        const char* name;
        QStringList options;
        QString expect;
    };
    const QList<Combo> combos{
        {"default", {}, "external-from=1024"},
        {"--threshold 0", {"--threshold", "0"}, "external-from=0"},
        {"--inline", {"--inline"}, "inline"},
        {"--align 0", {"--align", "0"}, "external-from=1024"},
        {"--order size", {"--order", "size"}, "external-from=1024"},
        {"--shard-size", {"--shard-size", "1MiB"}, "external-from=1024,sharded=1048576"},
        {"--checksum", {"--checksum"}, "external-from=1024,checksum"},
        {"--no-attributes", {"--no-attributes"}, "external-from=1024,attributes-inline"},
        {"several at once",
            {"--threshold", "1500", "--order", "size", "--align", "0", "--checksum",
                "--no-attributes", "--data", "weights.bin"},
            "external-from=1500,attributes-inline,checksum"},
    };
    for (const auto& c : combos) {
        QTest::addRow("inline source, %s", c.name) << false << c.options << c.expect;
        QTest::addRow("external source, %s", c.name) << true << c.options << c.expect;
    }
}

void TestInterop::cliOutputReadsInOnnx()
{
    QFETCH(bool, externalSource);
    QFETCH(QStringList, options);
    QFETCH(QString, expect);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QDir().mkpath(dir.filePath("out")));
    const WeightedModel fixture = weightedModel();
    const QString source = dir.filePath("source.onnx");
    QVERIFY(externalSource
            ? saveWithExternalData(fixture.proto, dir.path(), "source.onnx", "source.onnx.data")
            : saveModel(fixture.proto, source));
    const QString output = dir.filePath("out/model.onnx");
    const Run repacked = runRepack(QStringList{source, "-o", output} + options);
    QVERIFY2(repacked.exitCode == 0, repacked.out.constData());

    const QString list = dir.filePath("pairs.txt");
    QVERIFY(writeList(list, {source + '\t' + output + '\t' + expect}));
    const Run checked = interop(list);
    QVERIFY2(checked.exitCode == 0, checked.out.constData());
    QVERIFY2(checked.out.contains(" 0 failure(s)"), checked.out.constData());
}

void TestInterop::testDataRoundTrip()
{
    QVERIFY2(QFileInfo(kTestData).isDir(), "needs Debian's libonnx-testdata");
    QElapsedTimer timer;
    timer.start();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QStringList models;
    QDirIterator it(kTestData, {"model.onnx"}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        models << it.next();
    models.sort();
    QVERIFY(models.size() > 1000);

    QStringList failures, pairs;
    int roundTripped = 0;
    for (const QString& path : models) {
        auto original = repack::Model::load(path.toStdString());
        if (!original) {
            failures << path + ": " + QString::fromStdString(original.error().message);
            continue;
        }
        if ((*original)->tensors().empty())
            continue;
        const QString work = dir.filePath(QString::number(roundTripped++));
        QDir().mkpath(work);
        const QString external = work + "/external.onnx", back = work + "/back.onnx";
        const Run out = runRepack({path, "-o", external, "--threshold", "0"});
        const Run in = runRepack({external, "-o", back, "--inline"});
        if (out.exitCode != 0 || in.exitCode != 0) {
            failures << path + ": " + QString::fromUtf8(out.out + in.out).trimmed();
            continue;
        }
        auto final = repack::Model::load(back.toStdString());
        if (!final) {
            failures << path + ": " + QString::fromStdString(final.error().message);
            continue;
        }
        const QString diff = compareModels(**original, **final);
        if (!diff.isEmpty())
            failures << path + ": " + diff;
        // onnx itself must read both the external and the inline form with equal values.
        pairs << path + '\t' + external + "\texternal-from=0";
        pairs << path + '\t' + back + "\tinline";
    }
    const QString list = dir.filePath("pairs.txt");
    QVERIFY(writeList(list, pairs));
    const Run checked = interop(list);
    qInfo("test data: %d of %lld models hold tensors and were round-tripped, %lld failed; %s "
          "in %.1f s",
        roundTripped, qlonglong(models.size()), qlonglong(failures.size()),
        checked.out.trimmed().split('\n').last().constData(), timer.elapsed() / 1000.0);
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
    QVERIFY2(checked.exitCode == 0, checked.out.constData());
    QVERIFY(roundTripped > 100);
}

QTEST_APPLESS_MAIN(TestInterop)
#include "tst_interop.moc"
