// Save targets (docs/targets.md): `repack --target ort|optimum|web|hub` names, aligns
// and limits data files as each reader wants, explicit options still win. Plans of sparse
// multi-GiB models check the real limits without writing them; small repacks are read back by
// python3-onnx (interop.py: onnx.checker and values), and the web chunks by their names and sizes.
#include "core/model/model.h"
#include "core/plan/save_plan.h"
#include "core/plan/targets.h"
#include "tests/support/cli_run.h"
#include "tests/support/python_reader.h"
#include "tests/support/save_fixtures.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace repack;
using namespace fixtures;

namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kGiB = 1ull << 30;

SaveOptions targetOptions(const char* name, const std::filesystem::path& modelPath)
{
    SaveOptions options;
    const Target* target = findTarget(name);
    if (target)
        applyTarget(*target, modelPath, options);
    return options;
}

// Plans saving a sparse model (`count` external tensors of `bytes` each, none written) for
// `target`.
Result<SavePlan> planSparse(
    const QString& dir, const QString& name, size_t count, uint64_t bytes, const char* target)
{
    const QString path = writeSparseModel(dir, name, count, bytes, name.toStdString() + ".src");
    auto model = loadModel(path);
    if (!model)
        return Error::notFound("cannot load " + path.toStdString());
    return planSave(*model, path.toStdString(), targetOptions(target, path.toStdString()));
}

QStringList dataFilesIn(const QString& dir)
{
    QStringList names = QDir(dir).entryList(QDir::Files);
    names.removeAll("in.onnx");
    names.removeAll("out.onnx");
    names.removeAll("interop.txt");
    names.removeIf([](const QString& n) { return n.startsWith("src"); });
    names.sort();
    return names;
}

} // namespace

class TestTargets : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyTargetHasADocumentedName()
    {
        QCOMPARE(QString::fromStdString(targetNames()), QStringLiteral("ort, optimum, web, hub"));
        QVERIFY(!findTarget("bogus"));
        QFile doc(QStringLiteral(REPACK_TARGETS_DOC));
        QVERIFY(doc.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(doc.readAll());
        for (const Target& t : targets())
            QVERIFY2(text.contains("## " + QString::fromUtf8(t.name.data(), int(t.name.size()))),
                t.name.data());
    }

    void dataFileIsNamedAfterTheOutputModel_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("expected");
        QTest::addRow("ort") << "ort"
                             << "encoder.onnx.data";
        QTest::addRow("optimum") << "optimum"
                                 << "encoder.onnx_data";
        QTest::addRow("web") << "web"
                             << "encoder.onnx_data";
        QTest::addRow("hub") << "hub"
                             << "encoder.onnx_data";
    }
    void dataFileIsNamedAfterTheOutputModel()
    {
        QFETCH(QString, target);
        QFETCH(QString, expected);
        const SaveOptions options = targetOptions(qPrintable(target), "/some/dir/encoder.onnx");
        QCOMPARE(QString::fromStdString(options.dataFile), expected);
    }

    // ort: tensors of 1 MiB and more at multiples of 64 KiB, smaller ones dense.
    void ortAlignsLargeTensorsTo64KiB()
    {
        QTemporaryDir dir;
        const QString path = writeUint8Model(
            dir.path(), "in.onnx", {3000, kMiB + 7, 5000, kMiB, 2 * kMiB}, 0, "src.data");
        auto model = loadModel(path);
        QVERIFY(model);
        auto plan = planSave(*model, path.toStdString(), targetOptions("ort", path.toStdString()));
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        QCOMPARE(plan->files, std::vector<std::string>{"in.onnx.data"});
        int aligned = 0;
        for (const auto& t : plan->tensors) {
            if (t.length >= kMiB) {
                QCOMPARE(t.offset % kWindowsMapGranularity, 0u);
                ++aligned;
            }
        }
        QCOMPARE(aligned, 3);
        QCOMPARE(plan->tensors[2].offset, plan->tensors[1].offset + plan->tensors[1].length);
    }

    // web: chunks under Chrome's ArrayBuffer limit, named name, name_1, ...; planned for a
    // sparse 3.4 GiB model, nothing written.
    void webChunksStayUnderTheBrowserLimit()
    {
        QTemporaryDir dir;
        auto plan = planSparse(dir.path(), "m.onnx", 5, 700 * kMiB, "web");
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        const std::vector<std::string> expected{"m.onnx_data", "m.onnx_data_1", "m.onnx_data_2"};
        QCOMPARE(plan->files, expected);
        for (uint64_t bytes : plan->fileBytes)
            QVERIFY(bytes < kBrowserBufferLimit);
    }

    void webRefusesATensorPastTheLimit()
    {
        QTemporaryDir dir;
        auto plan = planSparse(dir.path(), "m.onnx", 2, 2 * kGiB, "web");
        QVERIFY(!plan);
        QVERIFY2(plan.error().message.find("graph/t0") != std::string::npos,
            plan.error().message.c_str());
        QVERIFY(plan.error().message.find(std::to_string(2 * kGiB)) != std::string::npos);
    }

    void webRefusesMoreThan100Chunks()
    {
        QTemporaryDir dir;
        auto plan = planSparse(dir.path(), "m.onnx", 101, kGiB + 1, "web");
        QVERIFY(!plan);
        QVERIFY2(plan.error().message.find("101") != std::string::npos
                && plan.error().message.find("100") != std::string::npos,
            plan.error().message.c_str());
        // 100 chunks are fine.
        auto ok = planSparse(dir.path(), "n.onnx", 100, kGiB + 1, "web");
        QVERIFY2(ok, ok ? "" : ok.error().message.c_str());
        QCOMPARE(ok->files.size(), size_t(100));
        QCOMPARE(QString::fromStdString(ok->files.back()), QStringLiteral("n.onnx_data_99"));
    }

    // hub: shards of at most 5,000,000,000 bytes, named by SPEC 5a's rule.
    void hubShardsAt5GB()
    {
        QTemporaryDir dir;
        auto plan = planSparse(dir.path(), "model.onnx", 5, 2 * kGiB, "hub");
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        const std::vector<std::string> expected{"model-00001-of-00003.onnx_data",
            "model-00002-of-00003.onnx_data", "model-00003-of-00003.onnx_data"};
        QCOMPARE(plan->files, expected);
        for (uint64_t bytes : plan->fileBytes)
            QVERIFY(bytes <= kHubShardBytes);
    }

    // Explicit options win over the target's, through the CLI's `plan --json`.
    void explicitOptionsWin()
    {
        QTemporaryDir dir;
        const QString path
            = writeUint8Model(dir.path(), "in.onnx", {3000, kMiB + 7, 2 * kMiB}, 0, "src.data");
        const auto run = runCli(
            {"plan", path, "--target", "ort", "--align", "4KiB", "--data", "w.bin", "--json"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const QJsonObject doc = QJsonDocument::fromJson(run.out).object();
        bool off64k = false;
        for (const auto& v : doc["tensors"].toArray()) {
            const QJsonObject t = v.toObject();
            QCOMPARE(t["location"].toString(), QStringLiteral("w.bin"));
            off64k
                |= t["offset"].toInteger() % 65536 != 0 && t["length"].toInteger() >= qint64(kMiB);
        }
        QVERIFY2(off64k, "with --align 4KiB some large tensor is not at a multiple of 64 KiB");

        const auto usage
            = runCli({"repack", path, "-o", dir.path() + "/x.onnx", "--target", "web", "--inline"});
        QCOMPARE(usage.exitCode, 2);
        const auto unknown = runCli({"plan", path, "--target", "tflite"});
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY(unknown.err.contains("tflite"));
    }

    // Each preset's output, written by the CLI, read back by python3-onnx.
    void repackOutputLoadsInPython_data()
    {
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<QString>("filePattern"); // every data file's name
        QTest::addColumn<int>("files");
        QTest::addColumn<qint64>("maxFileBytes"); // 0: no limit
        QTest::addRow("ort") << QStringList{"--target", "ort"} << "out\\.onnx\\.data" << 1
                             << qint64(0);
        QTest::addRow("optimum") << QStringList{"--target", "optimum"} << "out\\.onnx_data" << 1
                                 << qint64(0);
        // Smaller chunks than the browser's limit so a small model has several.
        QTest::addRow("web") << QStringList{"--target", "web", "--shard-size", "1200KiB"}
                             << "out\\.onnx_data(_[1-9][0-9]?)?" << 3 << qint64(1200 * 1024);
        QTest::addRow("hub") << QStringList{"--target", "hub", "--shard-size", "1200KiB"}
                             << "out-0000[1-3]-of-00003\\.onnx_data" << 3 << qint64(1200 * 1024);
    }
    void repackOutputLoadsInPython()
    {
        QFETCH(QStringList, options);
        QFETCH(QString, filePattern);
        QFETCH(int, files);
        QFETCH(qint64, maxFileBytes);
        QTemporaryDir dir;
        const QString in = writeUint8Model(
            dir.path(), "in.onnx", {3000, kMiB + 7, 5000, kMiB, 600 * 1024, 200}, 4096, "src.data");
        const QString out = dir.path() + "/out.onnx";
        const auto run = runCli(QStringList{"repack", in, "-o", out} + options);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const QStringList names = dataFilesIn(dir.path());
        QCOMPARE(names.size(), files);
        const QRegularExpression pattern("^" + filePattern + "$");
        for (const QString& name : names) {
            QVERIFY2(pattern.match(name).hasMatch(), qPrintable(name));
            if (maxFileBytes)
                QVERIFY2(
                    QFileInfo(dir.path() + "/" + name).size() < maxFileBytes, qPrintable(name));
        }
        if (options.contains("web"))
            QVERIFY2(run.out.contains(
                         QStringLiteral("use_external_data_format: %1 ").arg(files).toUtf8()),
                run.out.constData());
        const QString failure
            = interopFailure(QStringLiteral(REPACK_INTEROP_SCRIPT), dir.path(), in, out);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }
};

QTEST_GUILESS_MAIN(TestTargets)
#include "tst_targets.moc"
