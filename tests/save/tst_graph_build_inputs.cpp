// What a save writes loads in every reader, whatever the options (SPEC 5c): tensors readers need
// while building the graph (Reshape's shape, Slice's bounds, ConstantOfShape's value, ... in any
// graph, subgraph or function) stay inline at --threshold 0 and under a plan, a pin that would
// move one is refused with the reason, and an external one already on disk is an error verify
// names. ONNX Runtime (onnxruntime-node, when installed) and onnx's strict shape inference build
// every output's graph (tests/support/graph_readers.h).
#include "core/model/model.h"
#include "core/plan/save_plan.h"
#include "core/save/save.h"
#include "tests/support/cli_run.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/graph_readers.h"
#include "tests/support/model_builder.h"
#include "tests/support/python_reader.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <onnx/onnx_pb.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>

using namespace repack;
using namespace fixtures;

Q_DECLARE_METATYPE(onnx::ModelProto)

namespace {

onnx::TensorProto int64Tensor(const std::string& name, const std::vector<int64_t>& values)
{
    std::string bytes(values.size() * sizeof(int64_t), '\0');
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return rawTensor(name, onnx::TensorProto::INT64, {int64_t(values.size())}, bytes);
}

onnx::TensorProto floatTensor(const std::string& name, std::vector<int64_t> dims, float value)
{
    const std::vector<float> values(elementCount(dims), value);
    std::string bytes(values.size() * sizeof(float), '\0');
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return rawTensor(name, onnx::TensorProto::FLOAT, std::move(dims), bytes);
}

void declare(onnx::ValueInfoProto* value, const std::string& name, int32_t type,
    const std::vector<int64_t>& dims)
{
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(type);
    auto* shape = tensor->mutable_shape();
    for (int64_t d : dims)
        shape->add_dim()->set_dim_value(d);
}

// A model with input x: float [2, 3] and output y: float of `yDims`.
onnx::ModelProto modelWithIo(const std::vector<int64_t>& yDims)
{
    onnx::ModelProto model = emptyModel();
    declare(model.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
    declare(model.mutable_graph()->add_output(), "y", onnx::TensorProto::FLOAT, yDims);
    return model;
}

onnx::NodeProto& addOp(onnx::GraphProto& graph, const std::string& op, const std::string& name,
    const std::vector<std::string>& inputs, const std::string& output)
{
    onnx::NodeProto& node = addNode(graph, op, name);
    for (const auto& input : inputs)
        node.add_input(input);
    node.add_output(output);
    return node;
}

// Reshape(x, shape) to [3, 2], then MatMul with a weight w: float [2, 2] (a data input, which
// may go external).
onnx::ModelProto reshapeInitializer()
{
    onnx::ModelProto model = modelWithIo({3, 2});
    auto& g = *model.mutable_graph();
    *g.add_initializer() = int64Tensor("shape", {3, 2});
    *g.add_initializer() = floatTensor("w", {2, 2}, 0.5f);
    addOp(g, "Reshape", "r", {"x", "shape"}, "r_out");
    addOp(g, "MatMul", "m", {"r_out", "w"}, "y");
    return model;
}

// The shape comes from a Constant node, which readers turn into an initializer.
onnx::ModelProto constantShape()
{
    onnx::ModelProto model = modelWithIo({3, 2});
    auto& g = *model.mutable_graph();
    *g.add_initializer() = floatTensor("w", {3, 2}, 2.0f);
    addConstant(g, "c", int64Tensor("c_shape", {3, 2}));
    addOp(g, "Reshape", "r", {"x", "c_out"}, "r_out");
    addOp(g, "Add", "a", {"r_out", "w"}, "y");
    return model;
}

// If branches reading an outer-scope shape (then) and one of their own (else).
onnx::ModelProto ifBranches()
{
    onnx::ModelProto model = modelWithIo({3, 2});
    auto& g = *model.mutable_graph();
    declare(g.add_input(), "cond", onnx::TensorProto::BOOL, {});
    *g.add_initializer() = int64Tensor("outer_shape", {3, 2});
    onnx::NodeProto& node = addOp(g, "If", "branch", {"cond"}, "y");
    auto& thenBranch = addSubgraph(node, "then_branch");
    addOp(thenBranch, "Reshape", "then_r", {"x", "outer_shape"}, "then_y");
    declare(thenBranch.add_output(), "then_y", onnx::TensorProto::FLOAT, {3, 2});
    auto& elseBranch = addSubgraph(node, "else_branch");
    *elseBranch.add_initializer() = int64Tensor("inner_shape", {3, 2});
    *elseBranch.add_initializer() = floatTensor("inner_w", {3, 2}, 1.0f);
    addOp(elseBranch, "Reshape", "else_r", {"x", "inner_shape"}, "else_r_out");
    addOp(elseBranch, "Mul", "else_m", {"else_r_out", "inner_w"}, "else_y");
    declare(elseBranch.add_output(), "else_y", onnx::TensorProto::FLOAT, {3, 2});
    return model;
}

// ConstantOfShape: its shape input and its value attribute.
onnx::ModelProto constantOfShape()
{
    onnx::ModelProto model = modelWithIo({2, 3});
    auto& g = *model.mutable_graph();
    *g.add_initializer() = int64Tensor("dims", {2, 3});
    onnx::NodeProto& node = addOp(g, "ConstantOfShape", "fill", {"dims"}, "filled");
    auto* value = node.add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    *value->mutable_t() = floatTensor("fill_value", {1}, 1.5f);
    addOp(g, "Add", "a", {"x", "filled"}, "y");
    return model;
}

// Slice with every bound an initializer, Tile's repeats, and Unsqueeze/Squeeze axes.
onnx::ModelProto sliceTileSqueeze()
{
    onnx::ModelProto model = modelWithIo({2, 4});
    auto& g = *model.mutable_graph();
    *g.add_initializer() = int64Tensor("starts", {0});
    *g.add_initializer() = int64Tensor("ends", {2});
    *g.add_initializer() = int64Tensor("axes", {1});
    *g.add_initializer() = int64Tensor("steps", {1});
    *g.add_initializer() = int64Tensor("repeats", {1, 2});
    *g.add_initializer() = int64Tensor("unsqueeze_axes", {0});
    *g.add_initializer() = int64Tensor("squeeze_axes", {0});
    addOp(g, "Slice", "s", {"x", "starts", "ends", "axes", "steps"}, "sliced");
    addOp(g, "Tile", "t", {"sliced", "repeats"}, "tiled");
    addOp(g, "Unsqueeze", "u", {"tiled", "unsqueeze_axes"}, "unsqueezed");
    addOp(g, "Squeeze", "q", {"unsqueezed", "squeeze_axes"}, "y");
    return model;
}

// A model-local function whose body reshapes with a Constant.
onnx::ModelProto functionBody()
{
    onnx::ModelProto model = modelWithIo({3, 2});
    auto* local = model.add_opset_import();
    local->set_domain("local");
    local->set_version(1);
    auto& g = *model.mutable_graph();
    onnx::NodeProto& call = addOp(g, "ToThreeByTwo", "call", {"x"}, "y");
    call.set_domain("local");
    onnx::FunctionProto& f = addFunction(model, "local", "ToThreeByTwo");
    f.add_input("in");
    f.add_output("out");
    auto* opset = f.add_opset_import();
    opset->set_domain("");
    opset->set_version(17);
    onnx::NodeProto& constant = addNode(*f.mutable_node(), "Constant", "f_c");
    constant.add_output("f_shape");
    auto* value = constant.add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    *value->mutable_t() = int64Tensor("f_shape_value", {3, 2});
    onnx::NodeProto& reshape = addNode(*f.mutable_node(), "Reshape", "f_r");
    reshape.add_input("in");
    reshape.add_input("f_shape");
    reshape.add_output("out");
    return model;
}

QString write(const QString& dir, const onnx::ModelProto& model, const QString& name = "in.onnx")
{
    const QString path = dir + "/" + name;
    return saveModel(model, path) ? path : QString();
}

std::string storageOf(const Model& model, const std::string& name)
{
    for (const auto& t : model.tensors())
        if (t.name == name)
            return t.isExternal() ? "external" : "inline";
    return "missing";
}

QStringList codesOf(const Model& model)
{
    QStringList codes;
    for (const auto& p : model.problems())
        codes << QString::fromStdString(p.code);
    return codes;
}

} // namespace

class TestGraphBuildInputs : public QObject {
    Q_OBJECT

private slots:
    void staysInlineAtAnyThreshold_data();
    void staysInlineAtAnyThreshold();
    void pinToExternalIsRefusedWithTheReason();
    void planJsonSaysKeptInline();
    void externalOneOnDiskIsReportedAndRepackFixesIt();
    void unnamedAttributeTensorsStayUnnamed();
};

void TestGraphBuildInputs::staysInlineAtAnyThreshold_data()
{
    QTest::addColumn<onnx::ModelProto>("model");
    QTest::addColumn<QStringList>("keptInline");
    QTest::addColumn<QStringList>("external");
    QTest::addRow("Reshape's shape initializer")
        << reshapeInitializer() << QStringList{"shape"} << QStringList{"w"};
    QTest::addRow("a Constant node's value as a shape")
        << constantShape() << QStringList{"c_shape"} << QStringList{"w"};
    QTest::addRow("If branches: an outer-scope and an own initializer")
        << ifBranches() << QStringList{"outer_shape", "inner_shape"} << QStringList{"inner_w"};
    QTest::addRow("ConstantOfShape's input and value attribute")
        << constantOfShape() << QStringList{"dims", "fill_value"} << QStringList{};
    QTest::addRow("Slice bounds, Tile repeats, Squeeze and Unsqueeze axes")
        << sliceTileSqueeze()
        << QStringList{"starts", "ends", "axes", "steps", "repeats", "unsqueeze_axes",
               "squeeze_axes"}
        << QStringList{};
    QTest::addRow("a Constant in a model function")
        << functionBody() << QStringList{"f_shape_value"} << QStringList{};
}

void TestGraphBuildInputs::staysInlineAtAnyThreshold()
{
    QFETCH(onnx::ModelProto, model);
    QFETCH(QStringList, keptInline);
    QFETCH(QStringList, external);
    QTemporaryDir dir;
    const QString in = write(dir.path(), model);
    QVERIFY(!in.isEmpty());
    QCOMPARE(graphBuildFailure({in}), QString()); // the fixture itself is a valid model

    for (const char* threshold : {"0", "8"}) {
        const QString out = dir.path() + "/out-" + threshold + ".onnx";
        const CliRun run = runCli({"repack", in, "-o", out, "--threshold", threshold});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        auto saved = loadModel(out);
        QVERIFY(saved);
        for (const QString& name : keptInline)
            QCOMPARE(storageOf(*saved, name.toStdString()), std::string("inline"));
        for (const QString& name : external)
            QCOMPARE(storageOf(*saved, name.toStdString()), std::string("external"));
        QVERIFY2(!codesOf(*saved).contains("external-graph-build-input"),
            qPrintable(codesOf(*saved).join(", ")));
        const QString readers = graphBuildFailure({out});
        QVERIFY2(readers.isEmpty(), qPrintable(readers));
        const QString values = interopFailure(REPACK_INTEROP_SCRIPT, dir.path(), in, out);
        QVERIFY2(values.isEmpty(), qPrintable(values));
    }
}

void TestGraphBuildInputs::pinToExternalIsRefusedWithTheReason()
{
    QTemporaryDir dir;
    const QString in = write(dir.path(), ifBranches());
    auto model = loadModel(in);
    QVERIFY(model);
    SaveOptions options;
    options.placements.assign(model->tensors().size(), TensorPlacement());
    for (size_t i = 0; i < model->tensors().size(); ++i)
        if (model->tensors()[i].name == "outer_shape")
            options.placements[i] = TensorPlacement(Placement::External);
    auto plan = planSave(*model, in.toStdString(), options);
    QVERIFY(!plan);
    const QString message = QString::fromStdString(plan.error().message);
    QVERIFY2(message.contains("outer_shape") && message.contains("Reshape 'then_r'")
            && message.contains("keep it inline"),
        qPrintable(message));

    // The same pin through a plan file and the CLI: refused, nothing written.
    const QString planPath = dir.path() + "/plan.json";
    QFile planFile(planPath);
    QVERIFY(planFile.open(QIODevice::WriteOnly));
    planFile.write(R"({"schema": "onnx-repack/plan/1", "tensors": [{"scope": "graph",
        "name": "outer_shape", "storage": "external", "location": "in.onnx.data"}]})");
    planFile.close();
    const QString out = dir.path() + "/out.onnx";
    const CliRun run = runCli({"repack", in, "-o", out, "--plan", planPath});
    QCOMPARE(run.exitCode, 2); // a plan that cannot work with this model: a usage error
    QVERIFY2(
        run.err.contains("outer_shape") && run.err.contains("keep it inline"), run.err.constData());
    QVERIFY(!QFile::exists(out));
}

void TestGraphBuildInputs::planJsonSaysKeptInline()
{
    QTemporaryDir dir;
    const QString in = write(dir.path(), reshapeInitializer());
    const CliRun run = runCli({"plan", in, "--threshold", "0", "--json"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    const QJsonArray tensors = QJsonDocument::fromJson(run.out).object()["tensors"].toArray();
    QCOMPARE(tensors.size(), 2);
    for (const auto& value : tensors) {
        const QJsonObject t = value.toObject();
        if (t["name"].toString() == "shape") {
            QCOMPARE(t["storage"].toString(), QString("inline"));
            QVERIFY2(t["kept_inline"].toString().contains("Reshape 'r'"),
                qPrintable(t["kept_inline"].toString()));
        } else {
            QCOMPARE(t["storage"].toString(), QString("external"));
            QVERIFY(!t.contains("kept_inline"));
        }
    }
}

void TestGraphBuildInputs::externalOneOnDiskIsReportedAndRepackFixesIt()
{
    QTemporaryDir dir;
    onnx::ModelProto model = reshapeInitializer();
    DataFileBuilder data("in.onnx.data");
    for (auto& init : *model.mutable_graph()->mutable_initializer())
        data.append(init);
    QVERIFY(data.save(dir.path()));
    const QString in = write(dir.path(), model);

    // The readers really refuse it: this is the failure the rule prevents.
    const QString refused = graphBuildFailure({in});
    QVERIFY2(refused.contains("shape"), qPrintable(refused));

    const CliRun verify = runCli({"verify", in});
    QCOMPARE(verify.exitCode, 1);
    QVERIFY2(verify.err.contains("external-graph-build-input") && verify.err.contains("graph/shape")
            && verify.err.contains("onnx-repack repack"),
        verify.err.constData());

    const QString out = dir.path() + "/out.onnx";
    const CliRun repack = runCli({"repack", in, "-o", out});
    QVERIFY2(repack.exitCode == 0, repack.err.constData());
    const QString readers = graphBuildFailure({out});
    QVERIFY2(readers.isEmpty(), qPrintable(readers));
    QCOMPARE(runCli({"verify", out}).exitCode, 0);
}

void TestGraphBuildInputs::unnamedAttributeTensorsStayUnnamed()
{
    QTemporaryDir dir;
    onnx::ModelProto model = modelWithIo({2, 3});
    auto& g = *model.mutable_graph();
    onnx::TensorProto unnamed = floatTensor("", {2, 3}, 3.0f);
    unnamed.clear_name();
    addConstant(g, "c", unnamed);
    addOp(g, "Add", "a", {"x", "c_out"}, "y");
    const QString in = write(dir.path(), model);
    const QString out = dir.path() + "/out.onnx";
    const CliRun run = runCli({"repack", in, "-o", out, "--threshold", "0"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    onnx::ModelProto saved;
    const QByteArray bytes = fileContents(out);
    QVERIFY(saved.ParseFromArray(bytes.constData(), int(bytes.size())));
    const onnx::TensorProto& t = saved.graph().node(0).attribute(0).t();
    QCOMPARE(t.data_location(), onnx::TensorProto::EXTERNAL);
    QVERIFY2(!t.has_name(), ("a name field appeared: '" + t.name() + "'").c_str());
}

QTEST_GUILESS_MAIN(TestGraphBuildInputs)
#include "tst_graph_build_inputs.moc"
