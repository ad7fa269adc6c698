// `onnx-repack plan` and `repack --plan` as users run them ($REPACK_CLI): the plan printed
// with --json, edited by hand and replayed, predicts the saved files byte offset by byte
// offset; plan writes nothing; a bad plan file fails with its name and writes nothing.
#include "core/model/model.h"
#include "tests/support/cli_run.h"
#include "tests/support/save_fixtures.h"

#include <QDir>
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

// t0 1000 B, t1 2048 B, t2 2500 B, t3 1 MiB, t4 1 MiB - 1, t5 5000 B; >= 1024 B in src.data.
const std::vector<uint64_t> kSizes{1000, 2048, 2500, 1 << 20, (1 << 20) - 1, 5000};

using Run = fixtures::CliRun;
using fixtures::runCli;

bool writeText(const QString& path, const QByteArray& text)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(text) == text.size();
}

QJsonObject byName(const QJsonArray& tensors, const QString& name)
{
    for (const auto& t : tensors)
        if (t.toObject()["name"].toString() == name)
            return t.toObject();
    return {};
}

// The hand edit: t0 (inline) to extra.data, t3 inline, t4 to extra.data, t1 left out (it
// follows the threshold), every offset and length scrambled (never read back).
QByteArray editPlan(QJsonObject plan)
{
    QJsonArray edited;
    for (const auto& value : plan["tensors"].toArray()) {
        QJsonObject t = value.toObject();
        const QString name = t["name"].toString();
        if (name == "t1")
            continue;
        if (name == "t0" || name == "t4") {
            t["storage"] = "external";
            t["location"] = "extra.data";
        }
        if (name == "t3") {
            t["storage"] = "inline";
            t.remove("location");
        }
        t["offset"] = 123456789;
        t["length"] = 7;
        edited.append(t);
    }
    plan["tensors"] = edited;
    plan["files"] = QJsonArray{};
    return QJsonDocument(plan).toJson();
}

} // namespace

class TestCliPlan : public QObject {
    Q_OBJECT
private slots:
    void planPrintsWithoutWriting();
    void handEditedPlanPredictsTheSavedFiles_data();
    void handEditedPlanPredictsTheSavedFiles();
    void badPlanFileFailsNamingItAndWritesNothing();
    void usageErrorsAreTheSameAsRepack();
    void planDiffListsWhatMovesFromWhereToWhere();
    void planDiffOfAKeptLayoutSaysNothingChanges();
};

void TestCliPlan::planPrintsWithoutWriting()
{
    QTemporaryDir dir;
    const QString in = writeUint8Model(dir.path(), "in.onnx", kSizes, 1024, "src.data");
    const auto before = hashFolder(dir.path());

    const Run text = runCli({"plan", in, "-o", dir.filePath("out/out.onnx")});
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(text.out.contains("graph/t3"), text.out.constData());
    QVERIFY(text.out.contains("out.onnx.data"));
    QVERIFY(text.out.contains("padding"));
    QVERIFY(text.out.contains("nothing written"));

    const Run json = runCli({"plan", in, "--json"});
    QCOMPARE(json.exitCode, 0);
    const QJsonObject plan = QJsonDocument::fromJson(json.out).object();
    QCOMPARE(plan["schema"].toString(), "onnx-repack/plan/1");
    QCOMPARE(plan["tensors"].toArray().size(), qsizetype(kSizes.size()));
    // In place by default: the data file is named after IN. Defaults: threshold 1 KiB,
    // alignment 4096 from 1 MiB, declaration order.
    QCOMPARE(byName(plan["tensors"].toArray(), "t0")["storage"].toString(), "inline");
    const QJsonObject t3 = byName(plan["tensors"].toArray(), "t3");
    QCOMPARE(t3["location"].toString(), "in.onnx.data");
    QCOMPARE(t3["offset"].toInteger(), 8192);
    QCOMPARE(t3["length"].toInteger(), 1 << 20);

    QCOMPARE(hashFolder(dir.path()), before);
    QVERIFY(!QFileInfo::exists(dir.filePath("out")));
}

void TestCliPlan::handEditedPlanPredictsTheSavedFiles_data()
{
    QTest::addColumn<QStringList>("options"); // given to both plan and repack

    QTest::addRow("defaults") << QStringList{};
    QTest::addRow("dense, by size") << QStringList{"--align", "0", "--order", "size"};
    QTest::addRow("sharded, aligned small")
        << QStringList{"--shard-size", "1MiB", "--align", "64", "--align-threshold", "100"};
}

void TestCliPlan::handEditedPlanPredictsTheSavedFiles()
{
    QFETCH(QStringList, options);
    QTemporaryDir dir;
    const QString in = writeUint8Model(dir.path(), "in.onnx", kSizes, 1024, "src.data");
    const QString out = dir.filePath("out/out.onnx");
    const Run exported = runCli(QStringList{"plan", in, "-o", out, "--json"} + options);
    QCOMPARE(exported.exitCode, 0);
    const QString planFile = dir.filePath("edited.json");
    QVERIFY(writeText(planFile, editPlan(QJsonDocument::fromJson(exported.out).object())));

    const Run predicted
        = runCli(QStringList{"plan", in, "-o", out, "--plan", planFile, "--json"} + options);
    QVERIFY2(predicted.exitCode == 0, predicted.err.constData());
    const QJsonObject plan = QJsonDocument::fromJson(predicted.out).object();
    const Run saved = runCli(QStringList{"repack", in, "-o", out, "--plan", planFile} + options);
    QVERIFY2(saved.exitCode == 0, saved.err.constData());

    auto original = loadModel(in);
    auto model = loadModel(out);
    QVERIFY(original && model);
    QVERIFY(!model->hasErrors());
    QCOMPARE(readAllTensors(*model), readAllTensors(*original));
    const QJsonArray tensors = plan["tensors"].toArray();
    QCOMPARE(tensors.size(), qsizetype(model->tensors().size()));
    std::map<QString, uint64_t> used;
    for (const auto& t : model->tensors()) {
        const QString name = QString::fromStdString(t.name);
        const QJsonObject p = byName(tensors, name);
        QCOMPARE(p["scope"].toString(), QString::fromStdString(t.scope));
        QCOMPARE(p["storage"].toString(), t.isExternal() ? "external" : "inline");
        if (!t.isExternal())
            continue;
        QCOMPARE(p["location"].toString(), QString::fromStdString(t.external->location()));
        QCOMPARE(uint64_t(p["offset"].toInteger()), t.external->offset);
        QCOMPARE(uint64_t(p["length"].toInteger()), t.external->length.value_or(0));
        used[p["location"].toString()] += t.byteSize();
    }
    // The edits took: t0 and t4 in extra.data, t3 inline, t1 by the threshold (external).
    QCOMPARE(byName(tensors, "t0")["location"].toString(), "extra.data");
    QCOMPARE(byName(tensors, "t4")["location"].toString(), "extra.data");
    QCOMPARE(byName(tensors, "t3")["storage"].toString(), "inline");
    QCOMPARE(byName(tensors, "t1")["storage"].toString(), "external");

    const QJsonArray files = plan["files"].toArray();
    QCOMPARE(files.size(), qsizetype(used.size()));
    for (const auto& value : files) {
        const QJsonObject f = value.toObject();
        const QString location = f["location"].toString();
        QCOMPARE(QFileInfo(dir.filePath("out/" + location)).size(), f["bytes"].toInteger());
        QCOMPARE(f["padding_bytes"].toInteger(), f["bytes"].toInteger() - qint64(used[location]));
    }
    QStringList expectedFiles{"out.onnx"};
    for (const auto& value : files)
        expectedFiles << value.toObject()["location"].toString();
    expectedFiles.sort();
    QCOMPARE(QDir(dir.filePath("out")).entryList(QDir::Files), expectedFiles);
}

void TestCliPlan::badPlanFileFailsNamingItAndWritesNothing()
{
    QTemporaryDir dir;
    const QString in = writeUint8Model(dir.path(), "in.onnx", kSizes, 1024, "src.data");
    const QString planFile = dir.filePath("bad.json");
    QVERIFY(writeText(planFile,
        R"({"schema": "onnx-repack/plan/1", "tensors": [{"scope": "graph", "name": "nope",
            "storage": "inline"}]})"));
    const auto before = hashFolder(dir.path());
    for (const QString command : {"plan", "repack"}) {
        const Run run
            = runCli({command, in, "-o", dir.filePath("out/out.onnx"), "--plan", planFile});
        QCOMPARE(run.exitCode, 2); // a plan naming no tensor of the model: a usage error
        QVERIFY2(run.err.contains(planFile.toUtf8()) && run.err.contains("graph/nope"),
            run.err.constData());
        QCOMPARE(hashFolder(dir.path()), before);
        QVERIFY(!QFileInfo::exists(dir.filePath("out")));
    }
    const Run missing = runCli({"repack", in, "-o", in, "--plan", dir.filePath("none.json")});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY2(missing.err.contains("none.json"), missing.err.constData());
}

void TestCliPlan::usageErrorsAreTheSameAsRepack()
{
    QTemporaryDir dir;
    const QString in = writeUint8Model(dir.path(), "in.onnx", kSizes, 1024, "src.data");
    for (const QStringList& bad :
        {QStringList{"--inline", "--threshold", "1K"}, QStringList{"--align", "3000"},
            QStringList{"--shard-size", "lots"}, QStringList{"--order", "random"}}) {
        for (const QString command : {"plan", "repack"}) {
            const QStringList args = QStringList{command, in, "-o", dir.filePath("o.onnx")} + bad;
            const Run run = runCli(args);
            QVERIFY2(run.exitCode == 2, qPrintable(args.join(' ') + ": " + run.err));
        }
    }
}

// A line of `plan --diff`'s table, its cells split on runs of spaces.
QStringList diffRow(const QByteArray& out, const QString& tensor)
{
    for (const QString& line : QString::fromUtf8(out).split(u'\n')) {
        const QStringList cells = line.split(u' ', Qt::SkipEmptyParts);
        if (!cells.isEmpty() && cells.first() == tensor)
            return cells;
    }
    return {};
}

QJsonObject jsonEntry(const QJsonArray& entries, const QString& name)
{
    for (const auto& e : entries)
        if (e.toObject()["name"].toString() == name)
            return e.toObject();
    return {};
}

void TestCliPlan::planDiffListsWhatMovesFromWhereToWhere()
{
    QTemporaryDir dir;
    const QString in = writeUint8Model(dir.path(), "in.onnx", kSizes, 1024, "src.data");
    const Run first = runCli({"plan", in, "--diff"});
    QVERIFY2(first.exitCode == 0, first.err.constData());
    // In place, the default data file is new: src.data's tensors go there, src.data goes unused.
    QCOMPARE(diffRow(first.out, "graph/t3").mid(1, 2), (QStringList{"new", "file"}));
    QVERIFY2(diffRow(first.out, "graph/t3").last() == "in.onnx.data@8192", first.out.constData());
    QCOMPARE(diffRow(first.out, "src.data").last(), "unused");
    QCOMPARE(diffRow(first.out, "in.onnx.data").last(), "new");
    QVERIFY(diffRow(first.out, "graph/t0").isEmpty()); // inline and staying so

    // Saved with the defaults; then a threshold of 3000 B takes t1 and t2 inline and every
    // tensor after them moves to the front of the file.
    QCOMPARE(runCli({"repack", in, "-o", in}).exitCode, 0);
    const auto before = hashFolder(dir.path());
    const Run text = runCli({"plan", in, "--diff", "--threshold", "3000"});
    QVERIFY2(text.exitCode == 0, text.err.constData());
    QCOMPARE(diffRow(text.out, "graph/t2"),
        (QStringList{"graph/t2", "to", "inline", "2500", "in.onnx.data@2048", "inline"}));
    QCOMPARE(diffRow(text.out, "graph/t3"),
        (QStringList{"graph/t3", "moved", "1048576", "in.onnx.data@8192", "in.onnx.data@0"}));
    QCOMPARE(diffRow(text.out, "in.onnx.data").last(), "resized");
    QVERIFY(diffRow(text.out, "graph/t0").isEmpty());
    QVERIFY2(text.out.contains("5 of 6 tensor(s) change: 3 moved, 0 new file, 2 to inline, "
                               "0 to external"),
        text.out.constData());

    const Run json = runCli({"plan", in, "--diff", "--threshold", "3000", "--json"});
    QCOMPARE(json.exitCode, 0);
    const QJsonObject diff = QJsonDocument::fromJson(json.out).object();
    QCOMPARE(diff["schema"].toString(), "onnx-repack/plan-diff/1");
    QCOMPARE(diff["storage_changed"].toArray().size(), 2);
    const QJsonObject t2 = jsonEntry(diff["storage_changed"].toArray(), "t2");
    QCOMPARE(t2["a"].toObject()["location"].toString(), "in.onnx.data");
    QCOMPARE(t2["a"].toObject()["offset"].toInteger(), 2048);
    QCOMPARE(t2["b"].toObject()["storage"].toString(), "inline");
    const QJsonObject t3 = jsonEntry(diff["moved"].toArray(), "t3");
    QCOMPARE(t3["a"].toObject()["offset"].toInteger(), 8192);
    QCOMPARE(t3["b"].toObject()["offset"].toInteger(), 0);
    QCOMPARE(diff["moved"].toArray().size(), 3);
    QCOMPARE(diff["unchanged"].toArray().size(), 1);
    QCOMPARE(diff["added"].toArray().size(), 0);
    QCOMPARE(diff["totals"].toObject()["to_inline_bytes"].toInteger(), 2048 + 2500);
    QCOMPARE(hashFolder(dir.path()), before);
}

void TestCliPlan::planDiffOfAKeptLayoutSaysNothingChanges()
{
    QTemporaryDir dir;
    const QString in = writeUint8Model(dir.path(), "in.onnx", kSizes, 1024, "src.data");
    QCOMPARE(runCli({"repack", in, "-o", in}).exitCode, 0);
    const Run text = runCli({"plan", in, "--diff"});
    QVERIFY2(text.exitCode == 0, text.err.constData());
    QVERIFY2(text.out.startsWith("nothing changes: all 6 tensor(s) keep their place"),
        text.out.constData());
    QVERIFY(diffRow(text.out, "graph/t3").isEmpty());

    const Run json = runCli({"plan", in, "--diff", "--json"});
    const QJsonObject diff = QJsonDocument::fromJson(json.out).object();
    QCOMPARE(diff["unchanged"].toArray().size(), qsizetype(kSizes.size()));
    QCOMPARE(diff["totals"].toObject()["changed"].toInteger(), 0);
    QCOMPARE(diff["files"].toArray().size(), 1);
    QCOMPARE(diff["files"].toArray()[0].toObject()["change"].toString(), "unchanged");
}

QTEST_GUILESS_MAIN(TestCliPlan)
#include "tst_cli_plan.moc"
