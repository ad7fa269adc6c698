// diffModels(): each kind of change between two fixture models, matched by scope + name.
#include "core/inspect/diff.h"
#include "core/model/model.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/model_builder.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include "core/model/data_file.h"
#include "tests/support/result_checks.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <onnx/onnx_pb.h>

using namespace repack;
using namespace fixtures;

namespace {

// Model B's version of tensor "x" (model A always has x external at w.bin@64, 2000 bytes).
enum class Change { None, Offset, File, ToInline, Bytes, Dtype, Shape, Rename, OtherScope };

// Writes `dir`/m.onnx with data in w.bin: "keep" (inline), "ext" (external, never changed) and
// "x" as `change` says.
QString writeVariant(const QString& dir, Change change)
{
    onnx::ModelProto proto = emptyModel();
    auto* graph = proto.mutable_graph();
    *graph->add_initializer() = rawTensor("keep", 2, {10}, tensorContent(0, 10));
    auto ext = rawTensor("ext", 2, {1500}, tensorContent(1, 1500));
    std::string xBytes = tensorContent(2, 2000);
    if (change == Change::Bytes)
        xBytes[1000] = char(xBytes[1000] ^ 1);
    auto x = rawTensor("x", 2, {2000}, xBytes);
    if (change == Change::Dtype)
        x.set_data_type(3); // int8: same bytes, other meaning
    if (change == Change::Shape) {
        x.clear_dims();
        x.add_dims(40);
        x.add_dims(50);
    }
    if (change == Change::Rename)
        x.set_name("x2");

    DataFileBuilder data("w.bin");
    DataFileBuilder other("w.other.bin");
    data.externalize(ext, 8192);
    if (change == Change::File)
        other.externalize(x, 64);
    else if (change != Change::ToInline)
        data.externalize(x, change == Change::Offset ? 128 : 64);
    if (change == Change::OtherScope) // an If branch's initializer, not the main graph's
        *addSubgraph(addNode(*graph, "If", "cond"), "then_branch").add_initializer() = x;
    else
        *graph->add_initializer() = x;
    *graph->add_initializer() = ext;
    if (!data.save(dir) || (other.size() && !other.save(dir)))
        return {};
    const QString path = QDir(dir).filePath("m.onnx");
    return saveModel(proto, path) ? path : QString();
}

} // namespace

Q_DECLARE_METATYPE(Change)

class TestDiff : public QObject {
    Q_OBJECT
private slots:
    void statusNames();
    void changeDetected_data();
    void changeDetected();
    void sameFileIsAllUnchanged();
    void sameFileRangeIsEqualWithoutReading();
    void copyOfTheFileIsComparedByBytes();
    void progressCountsOnlyBytesRead();
    void cancelStopsTheComparison();
    void withoutContentNothingIsRead();
    void exitCodeGatesContent_data();
    void exitCodeGatesContent();
};

void TestDiff::statusNames()
{
    QCOMPARE(changeKey(ChangeKind::Added), "added");
    QCOMPARE(changeKey(ChangeKind::Removed), "removed");
    QCOMPARE(changeKey(ChangeKind::Moved), "moved");
    QCOMPARE(changeKey(ChangeKind::NewFile), "moved");
    QCOMPARE(changeKey(ChangeKind::ToInline), "storage_changed");
    QCOMPARE(changeKey(ChangeKind::ToExternal), "storage_changed");
    QCOMPARE(changeKey(ChangeKind::ContentChanged), "content_changed");
    QCOMPARE(changeKey(ChangeKind::Unchanged), "unchanged");
}

void TestDiff::changeDetected_data()
{
    QTest::addColumn<Change>("change");
    QTest::addColumn<QStringList>("expected"); // "status scope/name" for x's entries

    QTest::newRow("nothing") << Change::None << QStringList{"unchanged graph/x"};
    QTest::newRow("other offset") << Change::Offset << QStringList{"moved graph/x"};
    QTest::newRow("other file") << Change::File << QStringList{"moved graph/x"};
    QTest::newRow("brought inline") << Change::ToInline << QStringList{"storage_changed graph/x"};
    QTest::newRow("one byte flipped") << Change::Bytes << QStringList{"content_changed graph/x"};
    QTest::newRow("other dtype") << Change::Dtype << QStringList{"content_changed graph/x"};
    QTest::newRow("other shape") << Change::Shape << QStringList{"content_changed graph/x"};
    QTest::newRow("renamed") << Change::Rename << QStringList{"removed graph/x", "added graph/x2"};
    // Same name, but in an If branch instead of the main graph: another tensor.
    QTest::newRow("other scope") << Change::OtherScope
                                 << QStringList{"removed graph/x", "added <branch>/x"};
}

void TestDiff::changeDetected()
{
    QFETCH(Change, change);
    QFETCH(QStringList, expected);
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir("a") && QDir(dir.path()).mkdir("b"));
    const QString pathA = writeVariant(dir.filePath("a"), Change::None);
    const QString pathB = writeVariant(dir.filePath("b"), change);
    auto a = loadModel(pathA);
    auto b = loadModel(pathB);
    QVERIFY(a && b);
    QVERIFY(!a->hasErrors() && !b->hasErrors());
    for (const auto& t : b->tensors())
        if (t.scope != "graph") {
            QVERIFY(QString::fromStdString(t.scope).contains("then_branch"));
            expected.replaceInStrings("<branch>", QString::fromStdString(t.scope));
        }

    // A -> B, and the reverse direction (external -> inline reads the same either way).
    for (bool reversed : {false, true}) {
        auto entries = reversed ? diffModels(*b, *a) : diffModels(*a, *b);
        QVERIFY_OK(entries);
        QStringList seen;
        for (const auto& e : *entries) {
            const QString id = QString::fromStdString(e.scope + "/" + e.name);
            if (e.name == "keep" || e.name == "ext") {
                QCOMPARE(e.kind, ChangeKind::Unchanged); // same place, same bytes
                continue;
            }
            seen << QString::fromStdString(std::string(changeKey(e.kind))) + " " + id;
        }
        QStringList want = expected;
        if (reversed)
            want.replaceInStrings("removed ", "@")
                .replaceInStrings("added ", "removed ")
                .replaceInStrings("@", "added ");
        want.sort();
        seen.sort();
        QCOMPARE(seen, want);
    }
}

void TestDiff::sameFileIsAllUnchanged()
{
    QTemporaryDir dir;
    const QString path = writeVariant(dir.path(), Change::OtherScope);
    auto a = loadModel(path);
    auto b = loadModel(path);
    QVERIFY(a && b);
    auto entries = diffModels(*a, *b);
    QVERIFY(entries.ok());
    QCOMPARE(entries->size(), a->tensors().size());
    for (const auto& e : *entries)
        QCOMPARE(e.kind, ChangeKind::Unchanged);
}

namespace {

// Every data file `model` has opened, and how often each was mapped in total.
int mappings(const Model& model)
{
    int count = 0;
    for (const auto& t : model.tensors())
        if (t.isExternal() && t.external->file())
            count += t.external->file()->mapCount();
    return count;
}

// `dir`/m.onnx and a second model file `dir`/m2.onnx naming the same w.bin at the same offsets.
bool writeTwinModels(const QString& dir)
{
    return !writeVariant(dir, Change::None).isEmpty()
        && QFile::copy(QDir(dir).filePath("m.onnx"), QDir(dir).filePath("m2.onnx"));
}

} // namespace

// Two model files naming one data file at the same offsets: equal without reading a byte.
void TestDiff::sameFileRangeIsEqualWithoutReading()
{
    QTemporaryDir dir;
    QVERIFY(writeTwinModels(dir.path()));
    auto a = loadModel(dir.filePath("m.onnx"));
    auto b = loadModel(dir.filePath("m2.onnx"));
    QVERIFY(a && b);
    auto entries = diffModels(*a, *b);
    QVERIFY(entries.ok());
    for (const auto& e : *entries)
        QCOMPARE(e.kind, ChangeKind::Unchanged);
    QCOMPARE(mappings(*a), 0);
    QCOMPARE(mappings(*b), 0);
}

// The same location name at the same offsets, but another file (a copy, then a copy with one
// byte flipped): compared by bytes, so the flip is found and an equal copy reads equal.
void TestDiff::copyOfTheFileIsComparedByBytes()
{
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir("a") && QDir(dir.path()).mkdir("b"));
    QVERIFY(!writeVariant(dir.filePath("a"), Change::None).isEmpty());
    QVERIFY(QFile::copy(dir.filePath("a/m.onnx"), dir.filePath("b/m.onnx")));
    QVERIFY(QFile::copy(dir.filePath("a/w.bin"), dir.filePath("b/w.bin")));
    {
        auto a = loadModel(dir.filePath("a/m.onnx"));
        auto b = loadModel(dir.filePath("b/m.onnx"));
        QVERIFY(a && b);
        auto entries = diffModels(*a, *b);
        QVERIFY(entries.ok());
        for (const auto& e : *entries)
            QCOMPARE(e.kind, ChangeKind::Unchanged);
        QCOMPARE(mappings(*b), 2); // x and ext share one mapping, counted once per tensor
    }
    QFile copy(dir.filePath("b/w.bin"));
    QVERIFY(copy.open(QIODevice::ReadWrite) && copy.seek(64 + 1000));
    char byte = 0;
    QVERIFY(copy.getChar(&byte) && copy.seek(64 + 1000) && copy.putChar(char(byte ^ 1)));
    copy.close();
    auto a = loadModel(dir.filePath("a/m.onnx"));
    auto b = loadModel(dir.filePath("b/m.onnx"));
    QVERIFY(a && b);
    auto entries = diffModels(*a, *b);
    QVERIFY(entries.ok());
    for (const auto& e : *entries)
        QCOMPARE(e.kind, e.name == "x" ? ChangeKind::ContentChanged : ChangeKind::Unchanged);
}

void TestDiff::progressCountsOnlyBytesRead()
{
    QTemporaryDir dir;
    QVERIFY(writeTwinModels(dir.path()));
    QVERIFY(QDir(dir.path()).mkdir("b"));
    QVERIFY(!writeVariant(dir.filePath("b"), Change::Offset).isEmpty());
    auto a = loadModel(dir.filePath("m.onnx"));
    auto twin = loadModel(dir.filePath("m2.onnx"));
    auto other = loadModel(dir.filePath("b/m.onnx"));
    QVERIFY(a && twin && other);

    std::vector<Progress> seen;
    DiffOptions options;
    options.progress = [&seen](const Progress& p) { seen.push_back(p); };
    QVERIFY(diffModels(*a, *twin, options).ok());
    QVERIFY(!seen.empty());
    QCOMPARE(seen.back().bytesTotal, uint64_t(10)); // only "keep", inline in both
    QCOMPARE(seen.back().bytesDone, uint64_t(10));

    seen.clear();
    QVERIFY(diffModels(*a, *other, options).ok());
    QCOMPARE(seen.back().bytesTotal, uint64_t(10 + 1500 + 2000)); // other files: all read
    QCOMPARE(seen.back().bytesDone, seen.back().bytesTotal);
    for (size_t i = 1; i < seen.size(); ++i)
        QVERIFY(seen[i].bytesDone > seen[i - 1].bytesDone);
}

void TestDiff::cancelStopsTheComparison()
{
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir("a") && QDir(dir.path()).mkdir("b"));
    auto a = loadModel(writeVariant(dir.filePath("a"), Change::None));
    auto b = loadModel(writeVariant(dir.filePath("b"), Change::None));
    QVERIFY(a && b);
    CancelToken cancel;
    DiffOptions options;
    options.cancel = &cancel;
    options.progress = [&cancel](const Progress&) { cancel.cancel(); }; // after the first
    auto entries = diffModels(*a, *b, options);
    QVERIFY(!entries.ok());
    QCOMPARE(QString::fromStdString(entries.error().message), "cancelled");
    QVERIFY(entries.error().is(ErrorKind::Cancelled));
}

void TestDiff::withoutContentNothingIsRead()
{
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir("a") && QDir(dir.path()).mkdir("b"));
    auto a = loadModel(writeVariant(dir.filePath("a"), Change::None));
    auto b = loadModel(writeVariant(dir.filePath("b"), Change::Bytes));
    auto shape = loadModel(writeVariant(dir.path(), Change::Shape));
    QVERIFY(a && b && shape);
    DiffOptions options;
    options.compareContent = false;
    auto entries = diffModels(*a, *b, options);
    QVERIFY(entries.ok());
    for (const auto& e : *entries)
        QCOMPARE(e.kind, ChangeKind::Unchanged); // the flipped byte is not looked at
    QCOMPARE(mappings(*a) + mappings(*b), 0);
    auto shaped = diffModels(*a, *shape, options); // but dtype x shape is known without reading
    QVERIFY(shaped.ok());
    for (const auto& e : *shaped)
        QCOMPARE(e.kind, e.name == "x" ? ChangeKind::ContentChanged : ChangeKind::Unchanged);
}

void TestDiff::exitCodeGatesContent_data()
{
    QTest::addColumn<Change>("change");
    QTest::addColumn<int>("exitCode"); // with --exit-code; always 0 without

    QTest::newRow("unchanged") << Change::None << 0;
    QTest::newRow("moved") << Change::Offset << 0;
    QTest::newRow("other file") << Change::File << 0;
    QTest::newRow("storage changed") << Change::ToInline << 0;
    QTest::newRow("content changed") << Change::Bytes << 1;
    QTest::newRow("other dtype") << Change::Dtype << 1;
    QTest::newRow("added and removed") << Change::Rename << 1;
}

void TestDiff::exitCodeGatesContent()
{
    QFETCH(Change, change);
    QFETCH(int, exitCode);
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir("a") && QDir(dir.path()).mkdir("b"));
    const QString pathA = writeVariant(dir.filePath("a"), Change::None);
    const QString pathB = writeVariant(dir.filePath("b"), change);
    for (const QStringList& extra : {QStringList{}, QStringList{"--json"}}) {
        for (bool gate : {false, true}) {
            QProcess cli;
            cli.start(qEnvironmentVariable("REPACK_CLI"),
                QStringList{"diff", pathA, pathB} + extra
                    + (gate ? QStringList{"--exit-code"} : QStringList{}));
            QVERIFY(cli.waitForFinished(60000) && cli.exitStatus() == QProcess::NormalExit);
            QCOMPARE(cli.exitCode(), gate ? exitCode : 0);
            QVERIFY(cli.readAllStandardError().isEmpty());
        }
    }
}

QTEST_GUILESS_MAIN(TestDiff)
#include "tst_diff.moc"
