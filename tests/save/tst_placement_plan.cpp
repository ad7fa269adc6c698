// Plan files (SPEC 5b): planJson says where every tensor goes, readPlan reads scope, name,
// storage and location back as SaveOptions::plan, and every mistake in a hand-edited file is
// an error naming the file and the tensor.
#include "core/model/model.h"
#include "core/plan/placement_plan.h"
#include "core/plan/save_plan.h"
#include "tests/support/model_builder.h"
#include "tests/support/result_checks.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

using namespace repack;
using namespace fixtures;
using Json = nlohmann::ordered_json;

// QCOMPARE cannot print JSON values (they convert to anything); this says both sides.
#define COMPARE_JSON(actual, expected)                                                             \
    do {                                                                                           \
        const Json actual_ = (actual);                                                             \
        const Json expected_ = (expected);                                                         \
        QVERIFY2(actual_ == expected_, (actual_.dump() + " != " + expected_.dump()).c_str());      \
    } while (false)

namespace {

const std::filesystem::path kModelPath = "/nonexistent/m.onnx"; // data file: m.onnx.data

// graph/t0 100 B, graph/t1 4096 B, graph/t2 3000 B, graph/s (STRING), and <branch>/t0 2048 B
// in an If's then_branch: the same name in another scope is another tensor.
std::unique_ptr<Model> fixtureModel(bool duplicate = false)
{
    auto proto = std::make_unique<onnx::ModelProto>(emptyModel());
    auto* graph = proto->mutable_graph();
    *graph->add_initializer() = rawTensor("t0", 2, {100}, tensorContent(0, 100));
    *graph->add_initializer() = rawTensor("t1", 2, {4096}, tensorContent(1, 4096));
    *graph->add_initializer() = rawTensor("t2", 2, {3000}, tensorContent(2, 3000));
    *graph->add_initializer() = typedTensor("s", 8, {2});
    if (duplicate)
        *graph->add_initializer() = rawTensor("t2", 2, {10}, tensorContent(3, 10));
    auto& branch = addSubgraph(addNode(*graph, "If", "cond"), "then_branch");
    *branch.add_initializer() = rawTensor("t0", 2, {2048}, tensorContent(4, 2048));
    return Model::fromProto(std::move(proto), "/nonexistent");
}

int indexOf(const Model& model, const std::string& scope, const std::string& name)
{
    for (size_t i = 0; i < model.tensors().size(); ++i)
        if (model.tensors()[i].scope == scope && model.tensors()[i].name == name)
            return static_cast<int>(i);
    return -1;
}

std::string branchScope(const Model& model)
{
    for (const auto& t : model.tensors())
        if (t.scope != "graph")
            return t.scope;
    return {};
}

// A plan file naming `entries` (each {"scope", "name", ...}).
std::string planText(Json entries)
{
    return Json{{"schema", kPlanSchema}, {"tensors", std::move(entries)}}.dump();
}

} // namespace

class TestPlacementPlan : public QObject {
    Q_OBJECT
private slots:
    void jsonSaysWhereEveryTensorGoes();
    void roundTripReproducesThePlan();
    void unnamedTensorsStayAutoAndUnknownKeysAreIgnored();
    void externalWithoutLocationMeansTheDataFile();
    void errorsNameFileAndTensor_data();
    void errorsNameFileAndTensor();
    void sameScopeAndNameTwiceInTheModel();
    void unreadableFile();
    // Fuzz findings (docs/fuzzing.md), each named after the finding.
    void fuzzPlanNumberOverflow();
    void fuzzPlanDeepNesting();
};

void TestPlacementPlan::jsonSaysWhereEveryTensorGoes()
{
    auto model = fixtureModel();
    SaveOptions options;
    options.alignment = 0;
    options.placements.resize(model->tensors().size());
    options.placements[static_cast<size_t>(indexOf(*model, "graph", "t0"))]
        = {Placement::External, "extra.data"};
    auto plan = planSave(*model, kModelPath, options);
    QVERIFY_OK(plan);
    const Json json = planJson(*model, *plan, kModelPath);

    COMPARE_JSON(json["schema"], kPlanSchema);
    QCOMPARE(json["tensors"].size(), model->tensors().size());
    std::map<std::string, Json> byName;
    for (const auto& t : json["tensors"])
        byName[t["scope"].get<std::string>() + "/" + t["name"].get<std::string>()] = t;
    // Threshold 1024, declaration order, dense: t1 @0, t2 @4096, the branch's t0 @7096.
    COMPARE_JSON(byName["graph/t1"],
        (Json{{"scope", "graph"}, {"name", "t1"}, {"storage", "external"},
            {"location", "m.onnx.data"}, {"offset", 0}, {"length", 4096}}));
    COMPARE_JSON(byName["graph/t2"]["offset"], 4096);
    COMPARE_JSON(byName[branchScope(*model) + "/t0"]["offset"], 7096);
    COMPARE_JSON(
        byName["graph/s"], (Json{{"scope", "graph"}, {"name", "s"}, {"storage", "inline"}}));
    COMPARE_JSON(byName["graph/t0"]["location"], "extra.data");
    COMPARE_JSON(byName["graph/t0"]["offset"], 0);
    COMPARE_JSON(json["files"],
        (Json::array({{{"location", "m.onnx.data"}, {"bytes", 9144}, {"padding_bytes", 0},
                          {"orphaned_bytes", 0}, {"alignment", 0}, {"alignment_from", "option"}},
            {{"location", "extra.data"}, {"bytes", 100}, {"padding_bytes", 0},
                {"orphaned_bytes", 0}, {"alignment", 0}, {"alignment_from", "option"}}})));

    // Aligned at 4096 from 2048 bytes: t2 and the branch's t0 start on 4096-byte boundaries.
    options.alignment = 4096;
    options.alignThreshold = 2048;
    auto aligned = planSave(*model, kModelPath, options);
    QVERIFY(aligned.ok());
    const Json files = planJson(*model, *aligned, kModelPath)["files"];
    COMPARE_JSON(files[0]["bytes"], 8192 + 4096 + 2048 - 4096); // t1 0, t2 4096, t0' 8192
    COMPARE_JSON(files[0]["padding_bytes"], 8192 - 4096 - 3000);
}

void TestPlacementPlan::roundTripReproducesThePlan()
{
    auto model = fixtureModel();
    SaveOptions options;
    options.placements.resize(model->tensors().size());
    options.placements[static_cast<size_t>(indexOf(*model, "graph", "t0"))]
        = {Placement::External, "extra.data"};
    options.placements[static_cast<size_t>(indexOf(*model, "graph", "t2"))] = {Placement::Inline};
    auto plan = planSave(*model, kModelPath, options);
    QVERIFY(plan.ok());
    const std::string text = planFileText(*model, *plan, kModelPath);
    QVERIFY(text.ends_with("\n"));

    auto read = readPlan(*model, text, "plan.json");
    QVERIFY_OK(read);
    QCOMPARE(read->size(), model->tensors().size());
    for (size_t i = 0; i < read->size(); ++i) {
        const TensorPlacement& p = (*read)[i];
        QVERIFY(p.kind != Placement::Auto); // an exported plan names every tensor
        QCOMPARE(p.kind == Placement::External, plan->tensors[i].external);
        if (p.kind == Placement::External)
            QCOMPARE(p.location, plan->files[static_cast<size_t>(plan->tensors[i].file)]);
    }
    QCOMPARE((*read)[static_cast<size_t>(indexOf(*model, "graph", "t2"))],
        TensorPlacement(Placement::Inline));

    SaveOptions replay;
    replay.placements = *read;
    auto again = planSave(*model, kModelPath, replay);
    QVERIFY(again.ok());
    COMPARE_JSON(planJson(*model, *again, kModelPath), planJson(*model, *plan, kModelPath));
}

void TestPlacementPlan::unnamedTensorsStayAutoAndUnknownKeysAreIgnored()
{
    auto model = fixtureModel();
    Json doc{{"schema", kPlanSchema}, {"comment", "made by hand"}, {"files", 42},
        {"tensors",
            {{{"scope", "graph"}, {"name", "t1"}, {"storage", "inline"}, {"offset", 999},
                {"length", "whatever"}, {"note", {1, 2}}}}}};
    auto read = readPlan(*model, doc.dump(), "plan.json");
    QVERIFY_OK(read);
    for (size_t i = 0; i < read->size(); ++i)
        QCOMPARE((*read)[i].kind,
            static_cast<int>(i) == indexOf(*model, "graph", "t1") ? Placement::Inline
                                                                  : Placement::Auto);

    auto empty = readPlan(*model, planText(Json::array()), "plan.json");
    QVERIFY(empty.ok());
    QCOMPARE(*empty, std::vector<TensorPlacement>(model->tensors().size()));
}

void TestPlacementPlan::externalWithoutLocationMeansTheDataFile()
{
    auto model = fixtureModel();
    auto read = readPlan(*model,
        planText({{{"scope", "graph"}, {"name", "t0"}, {"storage", "external"}},
            {{"scope", "graph"}, {"name", "t1"}, {"storage", "external"}, {"location", nullptr}},
            {{"scope", "graph"}, {"name", "t2"}, {"storage", "inline"},
                {"location", "ignored.data"}}}),
        "plan.json");
    QVERIFY_OK(read);
    QCOMPARE((*read)[static_cast<size_t>(indexOf(*model, "graph", "t0"))],
        TensorPlacement(Placement::External));
    QCOMPARE((*read)[static_cast<size_t>(indexOf(*model, "graph", "t1"))],
        TensorPlacement(Placement::External));
    QCOMPARE((*read)[static_cast<size_t>(indexOf(*model, "graph", "t2"))],
        TensorPlacement(Placement::Inline));
}

void TestPlacementPlan::errorsNameFileAndTensor_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("expected"); // substrings of the message, besides the file

    const auto entry = [](const char* name, Json storage) {
        return Json{{"scope", "graph"}, {"name", name}, {"storage", std::move(storage)}};
    };
    QTest::addRow("malformed JSON")
        << R"({"schema": "onnx-repack/plan/1", "tensors": [)" << QStringList{"malformed", "line 1"};
    QTest::addRow("not an object") << "[1, 2]" << QStringList{"expected a JSON object"};
    QTest::addRow("another schema")
        << R"({"schema": "onnx-repack/inspect/1", "tensors": []})"
        << QStringList{"\"onnx-repack/inspect/1\"", "expected \"onnx-repack/plan/1\""};
    QTest::addRow("no schema") << R"({"tensors": []})" << QStringList{"schema\" is missing"};
    QTest::addRow("tensors not an array") << R"({"schema": "onnx-repack/plan/1", "tensors": {}})"
                                          << QStringList{"\"tensors\" must be an array"};
    QTest::addRow("entry not an object")
        << QString::fromStdString(planText({entry("t0", "inline"), 7}))
        << QStringList{"tensors[1]", "expected an object"};
    QTest::addRow("no name") << QString::fromStdString(
        planText({{{"scope", "graph"}, {"storage", "inline"}}}))
                             << QStringList{"tensors[0]", "string \"name\""};
    QTest::addRow("unknown name") << QString::fromStdString(
        planText({entry("t0", "inline"), entry("nope", "inline")}))
                                  << QStringList{"tensors[1] (graph/nope)",
                                         "no tensor 'nope' in scope 'graph'"};
    QTest::addRow("unknown scope") << QString::fromStdString(
        planText({{{"scope", "elsewhere"}, {"name", "t0"}, {"storage", "inline"}}}))
                                   << QStringList{"no tensor 't0' in scope 'elsewhere'"};
    QTest::addRow("named twice") << QString::fromStdString(
        planText({entry("t1", "inline"), entry("t0", "inline"), entry("t1", "external")}))
                                 << QStringList{"tensors[2] (graph/t1)",
                                        "named twice, first by tensors[0]"};
    QTest::addRow("storage not inline or external")
        << QString::fromStdString(planText({entry("t1", "raw")}))
        << QStringList{"tensors[0] (graph/t1)", "\"storage\" is \"raw\"",
               "expected \"inline\" or \"external\""};
    QTest::addRow("no storage") << QString::fromStdString(
        planText({{{"scope", "graph"}, {"name", "t1"}}}))
                                << QStringList{"(graph/t1)", "\"storage\" is missing"};
    QTest::addRow("STRING tensor external")
        << QString::fromStdString(planText({entry("s", "external")}))
        << QStringList{"(graph/s)", "STRING tensors cannot be stored externally"};
    QTest::addRow("location not a name") << QString::fromStdString(
        planText({{{"scope", "graph"}, {"name", "t1"}, {"storage", "external"}, {"location", 3}}}))
                                         << QStringList{"(graph/t1)", "\"location\" must be"};
}

void TestPlacementPlan::errorsNameFileAndTensor()
{
    QFETCH(QString, text);
    QFETCH(QStringList, expected);
    auto model = fixtureModel();
    auto read = readPlan(*model, text.toStdString(), "hand/plan.json");
    QVERIFY(!read.ok());
    const QString message = QString::fromStdString(read.error().message);
    QVERIFY2(message.startsWith("hand/plan.json: "), qPrintable(message));
    for (const QString& part : expected)
        QVERIFY2(message.contains(part), qPrintable(message));
}

void TestPlacementPlan::sameScopeAndNameTwiceInTheModel()
{
    auto model = fixtureModel(true);
    auto read = readPlan(*model,
        planText({{{"scope", "graph"}, {"name", "t2"}, {"storage", "inline"}}}), "plan.json");
    QVERIFY(!read.ok());
    QVERIFY2(QString::fromStdString(read.error().message)
                 .contains("(graph/t2): the model has 2 tensors with this scope and name"),
        read.error().message.c_str());
    // Naming only the others is fine.
    auto others = readPlan(*model,
        planText({{{"scope", "graph"}, {"name", "t1"}, {"storage", "inline"}}}), "plan.json");
    QVERIFY(others.ok());
}

void TestPlacementPlan::unreadableFile()
{
    auto model = fixtureModel();
    QTemporaryDir dir;
    const QString path = dir.filePath("missing.json");
    auto read = readPlanFile(*model, path.toStdString());
    QVERIFY(!read.ok());
    QVERIFY2(
        QString::fromStdString(read.error().message).contains(path), read.error().message.c_str());

    QFile file(dir.filePath("plan.json"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(planText({{{"scope", "graph"}, {"name", "t1"}, {"storage", "inline"}}}).c_str());
    file.close();
    auto ok = readPlanFile(*model, file.fileName().toStdString());
    QVERIFY_OK(ok);
    QCOMPARE((*ok)[static_cast<size_t>(indexOf(*model, "graph", "t1"))],
        TensorPlacement(Placement::Inline));
}

// fuzz_plan: a number too large for a double (1E400) escaped readPlan as an uncaught
// nlohmann::json out_of_range exception and terminated the CLI and the GUI.
void TestPlacementPlan::fuzzPlanNumberOverflow()
{
    auto model = fixtureModel();
    for (const char* text :
        {"4E444", R"({"schema": "onnx-repack/plan/1", "tensors": [], "x": 1E400})",
            R"({"schema": "onnx-repack/plan/1", "tensors": [{"scope": "graph", "name": "t1",
                 "storage": "external", "offset": -1E999}]})"}) {
        auto plan = readPlan(*model, text, "p.json");
        QVERIFY2(!plan.ok(), text);
        QVERIFY2(plan.error().message.starts_with("p.json: not a plan file"),
            plan.error().message.c_str());
        QVERIFY2(plan.error().message.find("number overflow") != std::string::npos,
            plan.error().message.c_str());
    }
}

// fuzz_plan: a "schema", "storage" or "location" of nested arrays was dumped whole into the
// error message, one recursion per level: a million levels overflowed the stack.
void TestPlacementPlan::fuzzPlanDeepNesting()
{
    auto model = fixtureModel();
    const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
    const std::string entry = R"({"schema": "onnx-repack/plan/1", "tensors": [{"scope": "graph",
        "name": "t1", )";
    for (const std::string& text :
        {R"({"schema": )" + deep + "}", entry + R"("storage": )" + deep + "}]}",
            entry + R"("storage": "external", "location": )" + deep + "}]}"}) {
        auto plan = readPlan(*model, text, "p.json");
        QVERIFY(!plan.ok());
        QVERIFY2(plan.error().message.find(" an array") != std::string::npos,
            plan.error().message.c_str());
    }
}

QTEST_GUILESS_MAIN(TestPlacementPlan)
#include "tst_placement_plan.moc"
