// Shared weights (`repack --dedupe`): tensors with identical dtype, shape and bytes
// are stored once and point at one range; the layout and inspect call it shared, not an
// overlap; python3-onnx reads equal values and onnx.checker accepts the result; the round trip
// back to separate copies and a second dedupe give the same values.
#include "core/model/model.h"
#include "core/plan/dedupe.h"
#include "core/plan/file_layout.h"
#include "core/plan/save_plan.h"
#include "core/save/save.h"
#include "tests/support/cli_run.h"
#include "tests/support/model_builder.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace repack;
using namespace fixtures;

namespace {

constexpr uint64_t kEmbed = 64 * 1024; // bytes of the tied embedding

// embed and lm_head tied (the same bytes), bias0..bias2 identical small constants of 2 KiB,
// other: embed's shape with one byte changed in the middle, flat: embed's bytes, another shape.
QString writeTiedModel(const QString& dir)
{
    onnx::ModelProto model = emptyModel();
    auto& graph = *model.mutable_graph();
    const std::string embed = patternBytes(kEmbed, 5);
    std::string other = embed;
    other[kEmbed / 2] ^= 0x40;
    *graph.add_initializer() = rawTensor("embed", 1, {128, 128}, embed);
    for (int i = 0; i < 3; ++i)
        *graph.add_initializer()
            = rawTensor("bias" + std::to_string(i), 1, {512}, patternBytes(2048, 9));
    *graph.add_initializer() = rawTensor("other", 1, {128, 128}, other);
    *graph.add_initializer() = rawTensor("lm_head", 1, {128, 128}, embed);
    *graph.add_initializer() = rawTensor("flat", 1, {128 * 128}, embed);
    const QString path = dir + "/in.onnx";
    return saveModel(model, path) ? path : QString();
}

struct Python {
    int exitCode = -1;
    QString out;
};

Python python(const QStringList& args)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(qEnvironmentVariable("REPACK_PYTHON"), args);
    Python result;
    if (process.waitForFinished(120000) && process.exitStatus() == QProcess::NormalExit)
        result.exitCode = process.exitCode();
    result.out = QString::fromUtf8(process.readAll());
    return result;
}

// onnx.checker accepts `output`, and onnx.load gives it the values of `source` (interop.py).
QString pythonFailure(const QString& dir, const QString& source, const QString& output)
{
    const auto checker
        = python({"-c", "import onnx, sys; onnx.checker.check_model(sys.argv[1])", output});
    if (checker.exitCode != 0)
        return "onnx.checker: " + checker.out;
    const QString list = dir + "/interop.txt";
    QFile file(list);
    if (!file.open(QIODevice::WriteOnly)
        || file.write((source + '\t' + output + '\t').toUtf8()) < 0)
        return "cannot write " + list;
    file.close();
    const auto interop = python({QStringLiteral(REPACK_INTEROP_SCRIPT), list});
    return interop.exitCode == 0 ? QString() : interop.out;
}

size_t indexOf(const Model& model, const std::string& name)
{
    for (size_t i = 0; i < model.tensors().size(); ++i)
        if (model.tensors()[i].name == name)
            return i;
    return SIZE_MAX;
}

} // namespace

class TestDedupe : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void findsOnlyIdenticalTensors()
    {
        QTemporaryDir dir;
        auto model = loadModel(writeTiedModel(dir.path()));
        QVERIFY(model);
        std::vector<size_t> all(model->tensors().size());
        for (size_t i = 0; i < all.size(); ++i)
            all[i] = i;
        auto groups = findIdenticalTensors(*model, all);
        QVERIFY2(groups, groups ? "" : groups.error().message.c_str());
        QCOMPARE(groups->size(), size_t(2));
        const std::vector<size_t> tied{indexOf(*model, "embed"), indexOf(*model, "lm_head")};
        const std::vector<size_t> biases{
            indexOf(*model, "bias0"), indexOf(*model, "bias1"), indexOf(*model, "bias2")};
        QCOMPARE((*groups)[0].tensors, tied);
        QCOMPARE((*groups)[0].copies, size_t(2));
        QCOMPARE((*groups)[1].tensors, biases);
    }

    void cancelledSearchFails()
    {
        QTemporaryDir dir;
        auto model = loadModel(writeTiedModel(dir.path()));
        QVERIFY(model);
        CancelToken cancel;
        cancel.cancel();
        SaveOptions options;
        options.dedupe = true;
        options.cancel = &cancel;
        auto plan = planSave(*model, dir.filePath("out.onnx").toStdString(), options);
        QVERIFY(!plan);
        QVERIFY2(
            plan.error().message.find("cancel") != std::string::npos, plan.error().message.c_str());
    }

    // The plan gives identical tensors one range; the data file holds their bytes once.
    void planSharesRanges()
    {
        QTemporaryDir dir;
        auto model = loadModel(writeTiedModel(dir.path()));
        QVERIFY(model);
        SaveOptions options;
        options.dedupe = true;
        options.alignment = 0;
        auto plan = planSave(*model, dir.filePath("out.onnx").toStdString(), options);
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        const auto& embed = plan->tensors[indexOf(*model, "embed")];
        const auto& head = plan->tensors[indexOf(*model, "lm_head")];
        QVERIFY(embed.external && head.external);
        QCOMPARE(head.offset, embed.offset);
        QCOMPARE(head.file, embed.file);
        QVERIFY(plan->tensors[indexOf(*model, "other")].offset != embed.offset);
        QVERIFY(plan->tensors[indexOf(*model, "flat")].offset != embed.offset);
        QCOMPARE(plan->sharedTensors, size_t(3)); // lm_head, bias1, bias2
        QCOMPARE(plan->sharedBytes, kEmbed + 2 * 2048);
        QCOMPARE(plan->fileBytes[0], 3 * kEmbed + 2048); // embed, other, flat, one bias
        QCOMPARE(usedBytes(*plan, 0), plan->fileBytes[0]);
    }

    // repack --dedupe --checksum: shared in inspect, verify ok, python equal and checker ok;
    // then back to separate copies, and deduped again, with the same values throughout.
    void repackRoundTrip()
    {
        QTemporaryDir dir;
        const QString in = writeTiedModel(dir.path());
        const QString out = dir.filePath("out.onnx");
        auto run = runCli({"repack", in, "-o", out, "--dedupe", "--checksum"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QCOMPARE(QFileInfo(dir.filePath("out.onnx.data")).size(), qint64(3 * kEmbed + 2048));

        const auto inspect = runCli({"inspect", out, "--json"});
        QCOMPARE(inspect.exitCode, 0);
        const QJsonObject doc = QJsonDocument::fromJson(inspect.out).object();
        const QJsonObject file = doc["files"].toArray()[0].toObject();
        QCOMPARE(file["overlapping_bytes"].toInteger(), 0);
        QCOMPARE(file["shared_bytes"].toInteger(), qint64(kEmbed + 2048));
        for (const auto& p : doc["problems"].toArray())
            QVERIFY2(p.toObject()["code"].toString() != "duplicate-bytes",
                qPrintable(p.toObject()["message"].toString()));
        const auto verify = runCli({"verify", out});
        QVERIFY2(verify.exitCode == 0, verify.err.constData());

        auto saved = loadModel(out);
        QVERIFY(saved);
        const auto layout = computeLayout(*saved, kDefaultAlignment);
        QCOMPARE(layout.size(), size_t(1));
        int shared = 0;
        for (const Region& r : layout[0].regions) {
            QVERIFY(r.type != RegionType::Overlap);
            shared += r.shared ? 1 : 0;
        }
        QCOMPARE(shared, 5); // embed + lm_head, three biases

        QString failure = pythonFailure(dir.path(), in, out);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));

        // Without --dedupe the copies come back, each its own range.
        const QString copies = dir.filePath("copies.onnx");
        run = runCli({"repack", out, "-o", copies});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        auto separate = loadModel(copies);
        QVERIFY(separate);
        QCOMPARE(computeLayout(*separate, kDefaultAlignment)[0].sharedBytes, 0u);
        failure = pythonFailure(dir.path(), in, copies);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));

        // And deduped again, in place: the same file as the first dedupe.
        run = runCli({"repack", copies, "-o", copies, "--dedupe", "--checksum"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QCOMPARE(fileContents(dir.filePath("copies.onnx.data")),
            fileContents(dir.filePath("out.onnx.data")));
        failure = pythonFailure(dir.path(), in, copies);
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }
};

QTEST_GUILESS_MAIN(TestDedupe)
#include "tst_dedupe.moc"
