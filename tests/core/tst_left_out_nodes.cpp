// Nodes of the main graph left out of the protos a save parses (Model::loadProtosLeavingOut):
// a model of many Constant nodes is saved without parsing them, each written back verbatim at
// its place among the nodes, and the same Model saves again (as the GUI reuses it).
#include "core/model/model.h"
#include "core/save/save.h"
#include "tests/support/model_builder.h"
#include "tests/support/python_reader.h"
#include "tests/support/result_checks.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

using namespace repack;
using namespace fixtures;

namespace {

constexpr int kFloat = 1, kUint8 = 2;

std::string canonical(const onnx::ModelProto& model)
{
    std::string out;
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    model.SerializeToCodedStream(&coded);
    return out;
}

onnx::ModelProto parsedFile(const QString& path)
{
    const QByteArray bytes = fileContents(path);
    onnx::ModelProto model;
    if (!model.ParseFromArray(bytes.constData(), int(bytes.size())))
        qWarning("%s: protobuf cannot parse it", qPrintable(path));
    return model;
}

// Constant nodes among other nodes (after initializers and a sparse initializer, whose tensors
// come first in the index), each reading the one before: small values (left out of a
// save's protos), large ones (moved external by a threshold of 2000 bytes), one whose payload
// stays in the .onnx while it is inline (>= Model::kInFileMinBytes), typed ones, a TENSORS
// attribute, a node with a subgraph holding a Constant, nodes with no tensor at all.
onnx::ModelProto interleavedModel()
{
    onnx::ModelProto model = emptyModel();
    auto* custom = model.add_opset_import();
    custom->set_domain("test.custom");
    custom->set_version(1);
    onnx::GraphProto& graph = *model.mutable_graph();
    *graph.add_initializer() = rawTensor("w0", kUint8, {3});
    *graph.add_initializer() = rawTensor("w1", kUint8, {5});
    *graph.add_sparse_initializer() = sparseTensor("sp", "sp_indices", {10}, 3); // 2 tensors
    std::string last = "w0";
    for (int i = 0; i < 120; ++i) {
        const std::string n = std::to_string(i);
        onnx::NodeProto* node = nullptr;
        switch (i % 8) {
        case 0:
        case 3:
            node = &addConstant(graph, "c" + n, rawTensor("", kUint8, {i % 5 + 1}));
            break;
        case 1:
            node = &addConstant(graph, "big" + n, rawTensor("", kFloat, {600 + i}));
            break;
        case 2:
            node = &addConstant(graph, "typed" + n, typedTensor("", kFloat, {2}));
            break;
        case 4:
            node = &addNode(graph, "Table", "table" + n);
            node->set_domain("test.custom");
            addTensorsAttribute(*node, "values",
                {rawTensor("", kUint8, {2}), rawTensor("", kUint8, {1}),
                    typedTensor("", kFloat, {1})});
            break;
        case 5: {
            node = &addNode(graph, "Branch", "branch" + n);
            node->set_domain("test.custom");
            onnx::GraphProto& sub = addSubgraph(*node, "body");
            *sub.add_initializer() = rawTensor("sub" + n, kUint8, {2});
            addConstant(sub, "subc" + n, rawTensor("", kUint8, {1}));
            sub.mutable_node(0)->set_output(0, "subc" + n);
            break;
        }
        case 6:
            node = &addNode(graph, "Identity", i == 6 ? "" : "id" + n);
            break;
        default:
            node = &addConstant(graph, "inFile" + n, rawTensor("", kUint8, {1500 + i}));
            break;
        }
        if (node->op_type() != "Constant")
            node->add_input(last);
        node->clear_output();
        last = "y" + n;
        node->add_output(last);
    }
    return model;
}

// The node names in order, and the number of tensors under each node, as protobuf reads them.
QStringList nodeNames(const onnx::ModelProto& model)
{
    QStringList names;
    for (const auto& node : model.graph().node())
        names << QString::fromStdString(node.name() + ":" + node.output(0));
    return names;
}

// Tensors of the main graph's nodes whose TensorProto the model holds.
int parsedNodeTensors(const Model& model)
{
    int parsed = 0;
    for (const auto& t : model.tensors())
        parsed += t.kind == TensorKind::Attribute && t.proto ? 1 : 0;
    return parsed;
}

// `model` written to `dir`/m.onnx, opened twice: `lean` as a save finds it, `whole` parsed before
// any save (nothing is ever left out of it); `tensors` are the values read from it.
struct OpenedTwice {
    QString source;
    std::unique_ptr<Model> lean, whole;
    std::map<std::string, std::string> tensors;
};
OpenedTwice openTwice(const QTemporaryDir& dir, const onnx::ModelProto& model)
{
    OpenedTwice out{dir.filePath("m.onnx"), nullptr, nullptr, {}};
    if (!saveModel(model, out.source))
        return out;
    out.lean = loadModel(out.source);
    out.whole = loadModel(out.source);
    if (!out.lean || !out.whole || !out.whole->loadProtos().ok())
        return OpenedTwice{};
    out.tensors = readAllTensors(*out.lean);
    return out;
}

} // namespace

class TestLeftOutNodes : public QObject {
    Q_OBJECT
private slots:
    void saveLeavesNodesOut();
    void inlineAndBackFromOneModel();
};

// A save that leaves the nodes whose tensors it does not change out of the protos writes what a
// save of the whole protos writes, byte for byte: every node at its place, every attribute as it
// was, the large constants moved external.
void TestLeftOutNodes::saveLeavesNodesOut()
{
    QTemporaryDir dir;
    const onnx::ModelProto built = interleavedModel();
    auto [source, lean, whole, tensors] = openTwice(dir, built);
    QVERIFY(lean && whole);
    SaveOptions options;
    options.threshold = 2000;
    for (const char* sub : {"lean", "whole"}) {
        QVERIFY(QDir(dir.path()).mkdir(sub));
        Model& model = *(sub == std::string("lean") ? lean : whole);
        QVERIFY_OK(save(model, dir.filePath(QString(sub) + "/m.onnx").toStdString(), options));
    }
    // Only the constants moved external, those left in the .onnx, and those of the first node
    // (the place the others go back after) were parsed.
    QVERIFY2(parsedNodeTensors(*lean) <= 35, qPrintable(QString::number(parsedNodeTensors(*lean))));
    QCOMPARE(fileContents(dir.filePath("lean/m.onnx")), fileContents(dir.filePath("whole/m.onnx")));
    QCOMPARE(fileContents(dir.filePath("lean/m.onnx.data")),
        fileContents(dir.filePath("whole/m.onnx.data")));
    const onnx::ModelProto written = parsedFile(dir.filePath("lean/m.onnx"));
    QCOMPARE(nodeNames(written), nodeNames(built));
    QCOMPARE(readAllTensors(*lean), tensors);
    auto reloaded = loadModel(dir.filePath("lean/m.onnx"));
    QVERIFY(reloaded);
    QCOMPARE(readAllTensors(*reloaded), tensors);
    const QString failure = interopFailure(
        QStringLiteral(REPACK_INTEROP_SCRIPT), dir.path(), source, dir.filePath("lean/m.onnx"));
    QVERIFY2(failure.isEmpty(), qPrintable(failure));

    // Asked for its protos, the model parses the nodes left out back in, each at its place.
    QCOMPARE(canonical(lean->proto()), canonical(reloaded->proto()));
    QCOMPARE(parsedNodeTensors(*lean), parsedNodeTensors(*reloaded));
}

// One Model saved four times, as the GUI does: large constants external, then all inline (the
// nodes left out by the first save are parsed in where the second changes their tensors), then
// every tensor of 100 bytes or more external (the sparse initializer stays inline: onnx 1.12's
// checker cannot read external sparse tensors), then back; each output is what a Model parsed
// whole writes through the same saves.
void TestLeftOutNodes::inlineAndBackFromOneModel()
{
    QTemporaryDir dir;
    const onnx::ModelProto built = interleavedModel();
    auto [source, model, whole, tensors] = openTwice(dir, built);
    QVERIFY(model && whole);
    const struct {
        const char* sub;
        uint64_t threshold;
        bool allInline;
    } steps[] = {{"a", 2000, false}, {"b", 1024, true}, {"c", 100, false}, {"d", 2000, false}};
    for (const auto& step : steps) {
        SaveOptions options;
        options.threshold = step.threshold;
        options.allInline = step.allInline;
        const QString out = dir.filePath(QString(step.sub) + "/m.onnx");
        const QString expected = dir.filePath(QString(step.sub) + "-whole/m.onnx");
        QVERIFY(QDir(dir.path()).mkpath(QString(step.sub) + "-whole"));
        QVERIFY(QDir(dir.path()).mkpath(step.sub));
        QVERIFY_OK(save(*model, out.toStdString(), options));
        if (std::string(step.sub) == "a") // the constants moved, those in the .onnx, the first
            QVERIFY2(parsedNodeTensors(*model) <= 35, step.sub);
        QVERIFY_OK(save(*whole, expected.toStdString(), options));
        QCOMPARE(fileContents(out), fileContents(expected));
        QCOMPARE(nodeNames(parsedFile(out)), nodeNames(built));
        QCOMPARE(readAllTensors(*model), tensors);
        const QString failure
            = interopFailure(QStringLiteral(REPACK_INTEROP_SCRIPT), dir.path(), source, out);
        QVERIFY2(failure.isEmpty(), qPrintable(QString(step.sub) + ": " + failure));
    }
}

QTEST_GUILESS_MAIN(TestLeftOutNodes)
#include "tst_left_out_nodes.moc"
