// The storage audit (core/inspect/audit.h): each warning on a fixture built to trigger it,
// naming the tensor or file and the fix, and none on a clean model; duplicate names from the
// index (an error for initializers, so `verify` fails them); `inspect` shows the warnings in
// text and --json with exit code 0.
#include "core/inspect/audit.h"
#include "core/inspect/verify.h"
#include "core/model/model.h"
#include "core/plan/targets.h"
#include "tests/support/cli_run.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/model_builder.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

using namespace repack;
using namespace fixtures;

namespace {

constexpr uint64_t kMiB = 1 << 20;

// A graph whose node reads every initializer named in `used`.
void useAll(onnx::GraphProto& graph, const std::vector<std::string>& used)
{
    auto& node = addNode(graph, "Concat", "use");
    for (const auto& name : used)
        node.add_input(name);
    node.add_output("y");
    graph.add_output()->set_name("y");
}

// Writes `model` and its data file into `dir`, loads it.
std::unique_ptr<Model> writeAndLoad(
    const QString& dir, const onnx::ModelProto& model, const DataFileBuilder* data = nullptr)
{
    if (data && !data->save(dir))
        return nullptr;
    if (!saveModel(model, dir + "/model.onnx"))
        return nullptr;
    return loadModel(dir + "/model.onnx");
}

// Codes of `problems` about `tensor` ("scope/name"; empty: model-wide).
QStringList codesFor(const std::vector<Problem>& problems, const QString& tensor)
{
    QStringList codes;
    for (const auto& p : problems)
        if (QString::fromStdString(p.tensor) == tensor)
            codes << QString::fromStdString(p.code);
    return codes;
}

const Problem* find(const std::vector<Problem>& problems, std::string_view code)
{
    for (const auto& p : problems)
        if (p.code == code)
            return &p;
    return nullptr;
}

// A model of `w0` (1 MiB, used) external at `offset` in data.bin.
std::unique_ptr<Model> externalAt(const QString& dir, uint64_t offset)
{
    onnx::ModelProto model = emptyModel();
    DataFileBuilder data("data.bin");
    auto t = rawTensor("w0", 2, {qint64(kMiB)}, patternBytes(kMiB, 3));
    data.externalize(t, offset);
    *model.mutable_graph()->add_initializer() = t;
    useAll(*model.mutable_graph(), {"w0"});
    return writeAndLoad(dir, model, &data);
}

// Writes a .onnx of about `bytes` bytes without writing them: one initializer whose raw_data
// payload is a hole of the file (reads as zeros).
bool writeHugeModel(const QString& path, uint64_t bytes)
{
    onnx::TensorProto tensor;
    tensor.set_name("big");
    tensor.set_data_type(2);
    tensor.add_dims(int64_t(bytes));
    std::string head = tensor.SerializeAsString();
    auto varint = [](std::string& out, uint64_t v) {
        for (; v >= 0x80; v >>= 7)
            out.push_back(char(v | 0x80));
        out.push_back(char(v));
    };
    head.push_back(char(0x4a)); // raw_data: field 9, length-delimited
    varint(head, bytes);
    const uint64_t tensorBytes = head.size() + bytes;
    std::string graph;
    graph.push_back(char(0x2a)); // GraphProto.initializer: field 5
    varint(graph, tensorBytes);
    onnx::ModelProto model = emptyModel();
    model.clear_graph();
    std::string file = model.SerializeAsString();
    file.push_back(char(0x3a)); // ModelProto.graph: field 7
    varint(file, graph.size() + tensorBytes);
    file += graph + head;
    const int fd = ::open(path.toLocal8Bit().constData(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0)
        return false;
    const bool ok = ::write(fd, file.data(), file.size()) == ssize_t(file.size())
        && ::ftruncate(fd, off_t(file.size() + bytes)) == 0;
    ::close(fd);
    return ok;
}

} // namespace

class TestAudit : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Used, 64 KiB-aligned, distinct, small files: nothing to say, and inspect says nothing.
    void cleanModelHasNoWarnings()
    {
        QTemporaryDir dir;
        onnx::ModelProto model = emptyModel();
        DataFileBuilder data("data.bin");
        std::vector<std::string> names;
        for (int i = 0; i < 3; ++i) {
            auto t = rawTensor("w" + std::to_string(i), 2, {qint64(kMiB)}, patternBytes(kMiB, i));
            data.append(t, 65536);
            *model.mutable_graph()->add_initializer() = t;
            names.push_back("w" + std::to_string(i));
        }
        *model.mutable_graph()->add_initializer()
            = rawTensor("small", 1, {4}, std::string(16, '\0')); // tiny, inline
        names.push_back("small");
        useAll(*model.mutable_graph(), names);
        auto loaded = writeAndLoad(dir.path(), model, &data);
        QVERIFY(loaded);
        QVERIFY(loaded->problems().empty());
        const auto problems = auditModel(*loaded);
        for (const auto& p : problems)
            qWarning() << p.code.c_str() << p.message.c_str();
        QVERIFY(problems.empty());

        const auto run = runCli({"inspect", dir.filePath("model.onnx"), "--json"});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(run.out).object()["problems"].toArray().size(), 0);
    }

    void unalignedTensors_data()
    {
        QTest::addColumn<quint64>("offset");
        QTest::addColumn<quint64>("alignment"); // what the audited readers want
        QTest::addColumn<QString>("code"); // empty: no alignment warning
        QTest::addRow("odd offset") << quint64(100) << quint64(4096) << "not-mappable";
        // The default save's 4 KiB is what current readers map: no warning by default.
        QTest::addRow("4 KiB, not 64 KiB") << quint64(8192) << quint64(4096) << "";
        QTest::addRow("4 KiB, not 64 KiB, for ort")
            << quint64(8192) << quint64(65536) << "not-mappable-on-windows";
        QTest::addRow("64 KiB, for ort") << quint64(131072) << quint64(65536) << "";
        QTest::addRow("odd offset, for ort") << quint64(100) << quint64(65536) << "not-mappable";
    }
    void unalignedTensors()
    {
        QFETCH(quint64, offset);
        QFETCH(quint64, alignment);
        QFETCH(QString, code);
        QTemporaryDir dir;
        auto loaded = externalAt(dir.path(), offset);
        QVERIFY(loaded);
        AuditOptions options;
        options.alignment = alignment;
        const auto problems = auditModel(*loaded, options);
        const QStringList codes = codesFor(problems, "graph/w0");
        QCOMPARE(codes, code.isEmpty() ? QStringList() : QStringList{code});
        if (!code.isEmpty()) {
            const Problem* p = find(problems, code.toStdString());
            QCOMPARE(p->severity, Severity::Warning);
            QVERIFY(p->message.find("offset " + std::to_string(offset)) != std::string::npos);
            QVERIFY(p->message.find("fix: onnx-repack repack") != std::string::npos);
        }
    }

    // Bytes of a data file no tensor reads (a tensor pinned out of it, kept placement): a
    // warning naming the file, the bytes and the fix (compact the file); inspect lists it, and
    // neither inspect nor verify fails because of it.
    void orphanedBytesAreAWarningWithTheFix()
    {
        QTemporaryDir dir;
        auto loaded = externalAt(dir.path(), 3 * kMiB); // 3 MiB no tensor reads before w0
        QVERIFY(loaded);
        const auto problems = auditModel(*loaded);
        const Problem* p = find(problems, code::OrphanedBytes);
        QVERIFY(p);
        QCOMPARE(p->severity, Severity::Warning);
        QVERIFY(p->tensor.empty());
        QVERIFY2(p->message.find("data.bin") != std::string::npos, p->message.c_str());
        QVERIFY2(p->message.find(std::to_string(3 * kMiB) + " bytes") != std::string::npos,
            p->message.c_str());
        QVERIFY2(p->message.find("fix: compact it (onnx-repack repack") != std::string::npos
                && p->message.find("--keep --compact data.bin") != std::string::npos,
            p->message.c_str());
        // Alignment padding is not orphaned: the same tensor at offset 0 leaves none.
        QVERIFY(!find(auditModel(*externalAt(dir.path(), 0)), code::OrphanedBytes));

        QVERIFY(externalAt(dir.path(), 3 * kMiB));
        const auto run = runCli({"inspect", dir.filePath("model.onnx"), "--json"});
        QCOMPARE(run.exitCode, 0);
        QStringList codes;
        for (const auto& v : QJsonDocument::fromJson(run.out).object()["problems"].toArray())
            codes << v.toObject()["code"].toString();
        QVERIFY2(codes.contains("orphaned-bytes"), qPrintable(codes.join(u',')));
        QCOMPARE(runCli({"verify", dir.filePath("model.onnx")}).exitCode, 0);
    }

    // A sparse data file of the browser's limit: nothing written but the size.
    void dataFilePastTheBrowserLimit()
    {
        QTemporaryDir dir;
        const QString path
            = writeSparseModel(dir.path(), "m.onnx", 1, kBrowserBufferLimit, "big.data");
        auto loaded = loadModel(path);
        QVERIFY(loaded);
        const auto problems = auditModel(*loaded);
        const Problem* p = find(problems, code::BrowserFileLimit);
        QVERIFY(p);
        QVERIFY(p->message.find("big.data") != std::string::npos);
        QVERIFY(p->message.find("--target web") != std::string::npos);
        // One byte less is fine.
        const QString fits
            = writeSparseModel(dir.path(), "n.onnx", 1, kBrowserBufferLimit - 1, "fits.data");
        auto smaller = loadModel(fits);
        QVERIFY(smaller);
        QVERIFY(!find(auditModel(*smaller), code::BrowserFileLimit));
    }

    void protobufNearTheLimit()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("huge.onnx");
        QVERIFY(writeHugeModel(path, (17ull << 30) / 10)); // 1.7 GiB
        auto loaded = loadModel(path);
        QVERIFY(loaded);
        QCOMPARE(loaded->tensors().size(), size_t(1));
        const auto problems = auditModel(*loaded, {.compareBytes = false});
        const Problem* p = find(problems, code::ProtobufNearLimit);
        QVERIFY(p);
        QVERIFY2(p->message.find("huge.onnx") != std::string::npos, p->message.c_str());
        QVERIFY(p->message.find("--threshold") != std::string::npos);
    }

    // Used by a node, by a graph output, or inside a subgraph: not unused.
    void unusedInitializers()
    {
        QTemporaryDir dir;
        onnx::ModelProto model = emptyModel();
        auto& graph = *model.mutable_graph();
        for (const char* name : {"byNode", "byOutput", "bySubgraph", "nobody"})
            *graph.add_initializer() = rawTensor(name, 1, {2}, std::string(8, '\1'));
        useAll(graph, {"byNode"});
        graph.add_output()->set_name("byOutput");
        auto& branch = addSubgraph(addNode(graph, "If", "if"), "then_branch");
        addNode(branch, "Identity", "inner").add_input("bySubgraph");
        auto loaded = writeAndLoad(dir.path(), model);
        QVERIFY(loaded);
        const auto problems = auditModel(*loaded);
        QStringList unused;
        for (const auto& p : problems)
            if (p.code == code::UnusedInitializer)
                unused << QString::fromStdString(p.tensor);
        QCOMPARE(unused, QStringList{"graph/nobody"});
    }

    // Identical bytes stored twice are wasted; at one shared range they are not.
    void duplicateBytes()
    {
        QTemporaryDir dir;
        onnx::ModelProto model = emptyModel();
        auto& graph = *model.mutable_graph();
        const std::string bytes = patternBytes(8192, 7);
        *graph.add_initializer() = rawTensor("embed", 1, {2048}, bytes);
        *graph.add_initializer() = rawTensor("lm_head", 1, {2048}, bytes);
        // Same shape, same first and last 4 KiB, one byte apart in the middle: not identical.
        std::string almost = bytes;
        almost[4096] ^= 1;
        *graph.add_initializer() = rawTensor("other", 1, {2048}, almost);
        // Same bytes, other shape: not the same tensor.
        *graph.add_initializer() = rawTensor("reshaped", 1, {2, 1024}, bytes);
        useAll(graph, {"embed", "lm_head", "other", "reshaped"});
        auto loaded = writeAndLoad(dir.path(), model);
        QVERIFY(loaded);
        const auto problems = auditModel(*loaded);
        std::vector<const Problem*> found;
        for (const auto& p : problems)
            if (p.code == code::DuplicateBytes)
                found.push_back(&p);
        QCOMPARE(found.size(), size_t(1));
        QCOMPARE(QString::fromStdString(found[0]->tensor), QStringLiteral("graph/embed"));
        const QString message = QString::fromStdString(found[0]->message);
        QVERIFY2(message.contains("graph/lm_head") && !message.contains("graph/other")
                && message.contains("8192 bytes) wasted") && message.contains("--dedupe"),
            qPrintable(message));
        // The CLI reads weights for it only when asked: inspect never touches weight bytes.
        const QString path = dir.filePath("model.onnx");
        const auto plain = runCli({"inspect", path});
        QCOMPARE(plain.exitCode, 0);
        QVERIFY2(!plain.out.contains("duplicate-bytes"), plain.out.constData());
        const auto deep = runCli({"inspect", path, "--deep"});
        QCOMPARE(deep.exitCode, 0);
        QVERIFY2(deep.out.contains("duplicate-bytes: graph/embed"), deep.out.constData());

        // Both pointing at one range of a data file: stored once, nothing wasted.
        QTemporaryDir shared;
        onnx::ModelProto tied = emptyModel();
        DataFileBuilder data("data.bin");
        auto a = rawTensor("embed", 1, {2048}, bytes);
        auto b = rawTensor("lm_head", 1, {2048}, bytes);
        data.externalize(a, 0);
        data.externalize(b, 0);
        *tied.mutable_graph()->add_initializer() = a;
        *tied.mutable_graph()->add_initializer() = b;
        useAll(*tied.mutable_graph(), {"embed", "lm_head"});
        auto loadedTied = writeAndLoad(shared.path(), tied, &data);
        QVERIFY(loadedTied);
        QVERIFY(!find(auditModel(*loadedTied), code::DuplicateBytes));
    }

    // Two initializers of one name: an error (onnx.checker rejects it), reported by verify too;
    // two attribute tensors of one name: a warning.
    void duplicateNames()
    {
        QTemporaryDir dir;
        onnx::ModelProto model = emptyModel();
        auto& graph = *model.mutable_graph();
        *graph.add_initializer() = rawTensor("w", 1, {2}, std::string(8, '\1'));
        *graph.add_initializer() = rawTensor("w", 1, {2}, std::string(8, '\2'));
        addConstant(graph, "c1", rawTensor("k", 1, {1}, std::string(4, '\3')));
        addConstant(graph, "c2", rawTensor("k", 1, {1}, std::string(4, '\4')));
        useAll(graph, {"w"});
        auto loaded = writeAndLoad(dir.path(), model);
        QVERIFY(loaded);
        const auto problems = verify(*loaded);
        const Problem* init = nullptr;
        const Problem* attr = nullptr;
        for (const auto& p : problems) {
            if (p.code != code::DuplicateName)
                continue;
            (p.tensor == "graph/w" ? init : attr) = &p;
        }
        QVERIFY(init && attr);
        QCOMPARE(init->severity, Severity::Error);
        QCOMPARE(QString::fromStdString(attr->tensor), QStringLiteral("graph/k"));
        QCOMPARE(attr->severity, Severity::Warning);
        QVERIFY(init->message.find("onnx.checker") != std::string::npos);

        const auto run = runCli({"verify", dir.filePath("model.onnx")});
        QCOMPARE(run.exitCode, 1);
        QVERIFY(run.err.contains("duplicate-name"));
    }

    // inspect prints the warnings with their codes, in text and --json, and still exits 0.
    void inspectShowsWarningsAndExitsZero()
    {
        QTemporaryDir dir;
        QVERIFY(externalAt(dir.path(), 100));
        const QString model = dir.filePath("model.onnx");
        const auto text = runCli({"inspect", model});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains("warning: not-mappable: graph/w0"), text.out.constData());
        const auto json = runCli({"inspect", model, "--json"});
        QCOMPARE(json.exitCode, 0);
        const QJsonArray problems
            = QJsonDocument::fromJson(json.out).object()["problems"].toArray();
        // The 100 bytes before w0 no tensor reads are orphaned, and said so after it.
        QCOMPARE(problems.size(), 2);
        QCOMPARE(problems[1].toObject()["code"].toString(), QStringLiteral("orphaned-bytes"));
        const QJsonObject p = problems[0].toObject();
        QCOMPARE(p["code"].toString(), QStringLiteral("not-mappable"));
        QCOMPARE(p["severity"].toString(), QStringLiteral("warning"));
        QCOMPARE(p["tensor"].toString(), QStringLiteral("graph/w0"));
        // verify reads the bytes; the audit is not its business, its exit code stays 0.
        QCOMPARE(runCli({"verify", model}).exitCode, 0);
    }

    // A model saved with the defaults passes the tool's own audit; audited for ort it asks for
    // 64 KiB, which a save for ort gives.
    void defaultSavePassesTheOwnAudit()
    {
        QTemporaryDir dir;
        const QString in = writeUint8Model(dir.path(), "in.onnx",
            {5000, 3u << 20, 7000, (2u << 20) + 1, 300, 4u << 20}, uint64_t(-1), "unused");
        const QString out = dir.filePath("out.onnx");
        QCOMPARE(runCli({"repack", in, "-o", out}).exitCode, 0);
        QVERIFY(QFile::remove(in)); // its own folder problems are not this test's
        const auto plain = runCli({"inspect", out, "--json"});
        QCOMPARE(plain.exitCode, 0);
        const QJsonArray problems
            = QJsonDocument::fromJson(plain.out).object()["problems"].toArray();
        QVERIFY2(problems.isEmpty(), QJsonDocument(problems).toJson().constData());

        const auto forOrt = runCli({"inspect", out, "--target", "ort"});
        QCOMPARE(forOrt.exitCode, 0);
        QVERIFY2(forOrt.out.contains("not-mappable-on-windows"), forOrt.out.constData());
        const QString ort = dir.filePath("ort.onnx");
        QCOMPARE(runCli({"repack", out, "-o", ort, "--target", "ort"}).exitCode, 0);
        const auto saved = runCli({"inspect", ort, "--target", "ort"});
        QVERIFY2(!saved.out.contains("not-mappable"), saved.out.constData());
        QCOMPARE(runCli({"inspect", ort, "--target", "nope"}).exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestAudit)
#include "tst_audit.moc"
