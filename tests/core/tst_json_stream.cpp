// JsonStream writes a document piece by piece with exactly the text of nlohmann's dump(2), and
// the streamed reports (inspect, verify, diff, plan) are byte for byte the documents they used to
// build, names needing escapes included. Bytes that are not UTF-8 (a tensor name is any bytes)
// become U+FFFD on both paths; dump() used to throw on them and the CLI died.
#include "core/inspect/diff.h"
#include "core/inspect/report.h"
#include "core/inspect/verify.h"
#include "core/json_stream.h"
#include "core/model/model.h"
#include "core/plan/placement_plan.h"
#include "core/plan/save_plan.h"
#include "tests/support/model_builder.h"
#include "tests/support/result_checks.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include <sstream>

using namespace repack;
using namespace fixtures;
using Json = nlohmann::ordered_json;

Q_DECLARE_METATYPE(Json)

namespace {

const std::string kBadUtf8 = "bad\xff\xfeutf8\xc3"; // two stray bytes, a truncated sequence
const std::string kReplaced = "bad\xef\xbf\xbd\xef\xbf\xbdutf8\xef\xbf\xbd"; // each as U+FFFD

// Names JSON must escape or pass through: quotes, backslashes, control characters, non-ASCII
// UTF-8 and bytes that are not UTF-8.
const std::vector<std::string> kNames{
    "quote\"d", "back\\slash", "ctl\x01\x1f\t\n\x7f", "ünïcødé ☃", kBadUtf8, "plain"};

// Every name of kNames as a raw initializer (the sizes differ so content differs by tensor),
// one more in the then_branch of an If whose node name needs escaping, a producer and an opset
// domain that are not UTF-8; `variant` drops the first tensor, changes the content of the
// second and adds one.
std::unique_ptr<onnx::ModelProto> trickyProto(bool variant = false)
{
    auto proto = std::make_unique<onnx::ModelProto>(emptyModel());
    proto->set_producer_name("maker\xff");
    auto* opset = proto->add_opset_import();
    opset->set_domain("dom\"\xfe");
    opset->set_version(3);
    auto* graph = proto->mutable_graph();
    for (size_t i = variant ? 1 : 0; i < kNames.size(); ++i)
        *graph->add_initializer() = rawTensor(
            kNames[i], 2, {int64_t(16 + i)}, tensorContent(variant && i == 1 ? 99 : i, 16 + i));
    if (variant)
        *graph->add_initializer() = rawTensor("new\xff", 2, {8}, tensorContent(7, 8));
    auto& branch = addSubgraph(addNode(*graph, "If", "if\"\xff\\"), "then_branch");
    *branch.add_initializer() = rawTensor("in\\branch\xfe", 2, {32}, tensorContent(8, 32));
    return proto;
}

std::unique_ptr<Model> trickyModel(bool variant = false)
{
    return Model::fromProto(trickyProto(variant), "/nonexistent/dir\xff");
}

// `doc` written through JsonStream: objects and arrays opened and closed member by member down
// to `depth`, whole values below it.
void stream(JsonStream& out, const Json& doc, int depth)
{
    if (depth == 0 || !doc.is_structured()) {
        out.value(doc);
        return;
    }
    doc.is_object() ? out.beginObject() : out.beginArray();
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (doc.is_object())
            out.key(it.key());
        stream(out, it.value(), depth - 1);
    }
    doc.is_object() ? out.endObject() : out.endArray();
}

// The streamed text is the text of the document it holds, dumped as a whole.
void compareWithDocument(const std::string& streamed)
{
    Json doc;
    try {
        doc = Json::parse(streamed);
    } catch (const Json::exception& e) {
        QFAIL(e.what()); // not JSON, or not UTF-8
    }
    QCOMPARE(streamed, jsonText(doc) + '\n');
}

} // namespace

class TestJsonStream : public QObject {
    Q_OBJECT
private slots:
    void layoutIsDumpTwo_data();
    void layoutIsDumpTwo();
    void invalidUtf8BecomesReplacementCharacters();
    void everyByteAtEveryPositionIsEscapedAsDumpDoes();
    void documentsPastTheBufferAreWhole();
    void inspectStreamIsTheDocument();
    void inspectRowsOfEveryShapeAreTheDocument();
    void verifyStreamIsTheDocument();
    void diffStreamIsTheDocument();
    void planStreamIsTheDocument();
    void cliPrintsNamesThatAreNotUtf8();
};

void TestJsonStream::layoutIsDumpTwo_data()
{
    QTest::addColumn<Json>("doc");
    QTest::addRow("empty object") << Json::object();
    QTest::addRow("empty array") << Json::array();
    QTest::addRow("scalar") << Json("x\"y");
    QTest::addRow("empty members") << Json{{"a", Json::array()}, {"b", Json::object()}};
    QTest::addRow("arrays of objects") << Json{{"schema", "s"},
        {"tensors",
            Json::array({Json{{"name", "t\\0"}, {"shape", {2, -1, 3}}, {"location", nullptr}},
                Json{{"name", "\xe2\x98\x83"}, {"shape", Json::array()}, {"ok", true}}})},
        {"totals", {{"n", 18446744073709551615ull}, {"empty", Json::object()}}}};
    QTest::addRow("nested arrays")
        << Json::array({Json::array({Json::array({1, 2}), Json::array()}), "\x01\n"});
}

void TestJsonStream::layoutIsDumpTwo()
{
    QFETCH(Json, doc);
    for (int depth = 0; depth <= 4; ++depth) {
        std::ostringstream out;
        JsonStream json(out);
        stream(json, doc, depth);
        QCOMPARE(out.str(), doc.dump(2));
    }
}

void TestJsonStream::invalidUtf8BecomesReplacementCharacters()
{
    const Json doc{{"name", kBadUtf8}, {kBadUtf8, 1}};
    QVERIFY_THROWS_EXCEPTION(Json::type_error, doc.dump(2)); // what the CLI used to do
    const std::string expected
        = "{\n  \"name\": \"" + kReplaced + "\",\n  \"" + kReplaced + "\": 1\n}";
    QCOMPARE(jsonText(doc), expected);
    for (int depth = 0; depth <= 1; ++depth) {
        std::ostringstream out;
        JsonStream json(out);
        stream(json, doc, depth);
        QCOMPARE(out.str(), expected);
    }
}

// Strings are checked eight bytes at a time: each byte value, at each position of a word and
// past the last whole word, is written as dump() writes it.
void TestJsonStream::everyByteAtEveryPositionIsEscapedAsDumpDoes()
{
    for (int byte = 0; byte < 256; ++byte)
        for (size_t at = 0; at < 19; ++at) {
            std::string text(19, 'a');
            text[at] = static_cast<char>(byte);
            std::ostringstream out;
            {
                JsonStream json(out);
                json.value(std::string_view(text));
            }
            QCOMPARE(out.str(), jsonText(Json(text)));
        }
}

// Text past the stream's buffer (a long name, many members) comes out whole and in order.
void TestJsonStream::documentsPastTheBufferAreWhole()
{
    Json doc = Json::array();
    for (int i = 0; i < 20000; ++i)
        doc.push_back(Json{{"name", "tensor/" + std::to_string(i)}, {"n", i}});
    doc.push_back(std::string(200 << 10, 'x'));
    doc.push_back(std::string((64 << 10) - 3, 'y'));
    doc.push_back("after");
    for (int depth = 1; depth <= 2; ++depth) {
        std::ostringstream out;
        {
            JsonStream json(out);
            stream(json, doc, depth);
        }
        QCOMPARE(out.str(), doc.dump(2));
    }
}

void TestJsonStream::inspectStreamIsTheDocument()
{
    auto model = trickyModel();
    const std::vector<Problem> folder{
        {Severity::Warning, "leftover-temporary", "", "dir/.tmp\xff \"x\" \\ is left over"}};
    for (const auto& problems : {std::vector<Problem>{}, folder}) {
        std::ostringstream out;
        writeInspectJson(out, *model, problems);
        QCOMPARE(out.str(), jsonText(inspectJson(*model, problems)) + '\n');
        compareWithDocument(out.str());
    }
    std::ostringstream out;
    writeInspectJson(out, *model);
    const Json doc = Json::parse(out.str());
    QCOMPARE(doc["tensors"].size(), kNames.size() + 1);
    for (size_t i = 0; i < kNames.size(); ++i)
        QCOMPARE(doc["tensors"][i]["name"].get<std::string>(),
            kNames[i] == kBadUtf8 ? kReplaced : kNames[i]);
}

// The tensors array is written from fixed fragments (issue 37): every kind of row is still the
// document's text. Scalars, many dims, negative and huge dims, an unknown dtype, external rows
// with and without a length, names past the stream's buffer and names that need escapes.
void TestJsonStream::inspectRowsOfEveryShapeAreTheDocument()
{
    auto proto = std::make_unique<onnx::ModelProto>(emptyModel());
    auto* graph = proto->mutable_graph();
    *graph->add_initializer() = rawTensor("scalar", onnx::TensorProto::FLOAT, {});
    *graph->add_initializer() = rawTensor("empty", onnx::TensorProto::FLOAT, {0, 3});
    *graph->add_initializer()
        = rawTensor("many dims", onnx::TensorProto::INT8, {1, 2, 1, 3, 1, 1, 2, 1, 1});
    onnx::TensorProto negative = typedTensor("negative", onnx::TensorProto::FLOAT, {2});
    negative.set_dims(0, -1);
    *graph->add_initializer() = negative;
    onnx::TensorProto huge = typedTensor("huge", onnx::TensorProto::FLOAT, {2});
    huge.set_dims(0, INT64_MAX);
    *graph->add_initializer() = huge;
    onnx::TensorProto unknown = rawTensor("unknown type", onnx::TensorProto::FLOAT, {4});
    unknown.set_data_type(-7);
    *graph->add_initializer() = unknown;
    onnx::TensorProto external = rawTensor("ext\"ernal", onnx::TensorProto::FLOAT, {4, 2});
    external.clear_raw_data();
    setExternal(external, "data\\fi\"le\xff.bin", "4096", "32");
    *graph->add_initializer() = external;
    onnx::TensorProto noLength = rawTensor("no length", onnx::TensorProto::FLOAT, {3});
    noLength.clear_raw_data();
    setExternal(noLength, "w.bin", std::string("18446744073709551615"), std::nullopt);
    *graph->add_initializer() = noLength;
    *graph->add_initializer() = rawTensor(std::string(100'000, 'n'), onnx::TensorProto::FLOAT, {1});
    *graph->add_initializer()
        = rawTensor(std::string(20'000, '\x01'), onnx::TensorProto::FLOAT, {1});
    for (const std::string& name : kNames)
        *graph->add_initializer() = rawTensor("row " + name, onnx::TensorProto::UINT8, {5});
    // Every field at its longest (a row's text is bounded before it is written): control
    // characters (6 bytes each escaped) in the name, the scope and the location, the lowest
    // unknown dtype, 20-digit numbers.
    const std::string controls(40, '\x01');
    auto& branch = addSubgraph(addNode(*graph, "If", controls), "then_branch");
    onnx::TensorProto longest = typedTensor(controls, onnx::TensorProto::FLOAT, {2, 3});
    longest.set_dims(0, INT64_MIN);
    longest.set_data_type(INT32_MIN);
    longest.clear_float_data();
    setExternal(longest, controls, std::string("18446744073709551615"),
        std::string("18446744073709551615"));
    *branch.add_initializer() = longest;
    auto model = Model::fromProto(std::move(proto), "/nonexistent");
    std::ostringstream out;
    writeInspectJson(out, *model);
    QCOMPARE(out.str(), jsonText(inspectJson(*model)) + '\n');
    compareWithDocument(out.str());
    const Json doc = Json::parse(out.str());
    QCOMPARE(doc["tensors"].size(), size_t(11) + kNames.size());
    QCOMPARE(doc["tensors"][2]["shape"].size(), size_t(9));
    QCOMPARE(doc["tensors"][6]["offset"].get<uint64_t>(), uint64_t(4096));
    QVERIFY(doc["tensors"][3]["elements"].is_null());
}

void TestJsonStream::verifyStreamIsTheDocument()
{
    // A missing data file whose name is not UTF-8: problems naming the tensor and the file.
    auto proto = trickyProto();
    auto external = rawTensor("ext\"\xff", 2, {4}, std::string());
    setExternal(external, "missing\xfe.data", "0", "16");
    *proto->mutable_graph()->add_initializer() = std::move(external);
    auto model = Model::fromProto(std::move(proto), "/nonexistent");
    const std::vector<Problem> problems = verify(*model);
    QVERIFY(!problems.empty());
    for (const auto& list : {std::vector<Problem>{}, problems}) {
        std::ostringstream out;
        writeVerifyJson(out, *model, list);
        compareWithDocument(out.str());
        QCOMPARE(Json::parse(out.str())["problems"].size(), list.size());
    }
}

void TestJsonStream::diffStreamIsTheDocument()
{
    auto a = trickyModel();
    auto b = trickyModel(true);
    for (const auto& [left, right] : {std::pair{a.get(), b.get()}, std::pair{a.get(), a.get()}}) {
        auto entries = diffModels(*left, *right);
        QVERIFY_OK(entries);
        std::ostringstream out;
        writeDiffJson(out, *left, *right, *entries);
        compareWithDocument(out.str());
        size_t listed = 0;
        const Json doc = Json::parse(out.str());
        for (const auto& [status, list] : doc.items())
            listed += status == "schema" ? 0 : list.size();
        QCOMPARE(listed, entries->size());
    }
}

void TestJsonStream::planStreamIsTheDocument()
{
    auto model = trickyModel();
    for (const uint64_t threshold : {uint64_t(0), uint64_t(20), uint64_t(1) << 40}) {
        SaveOptions options;
        options.threshold = threshold;
        auto plan = planSave(*model, "/nonexistent/m\xff.onnx", options);
        QVERIFY_OK(plan);
        const std::string text = planFileText(*model, *plan, "/nonexistent/m\xff.onnx");
        QCOMPARE(text, jsonText(planJson(*model, *plan, "/nonexistent/m\xff.onnx")) + '\n');
        compareWithDocument(text);
    }
}

void TestJsonStream::cliPrintsNamesThatAreNotUtf8()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString a = dir.filePath("a.onnx");
    const QString b = dir.filePath("b.onnx");
    QVERIFY(saveModel(*trickyProto(), a));
    QVERIFY(saveModel(*trickyProto(true), b));
    const QList<QStringList> commands{{"inspect", a, "--json"}, {"verify", a, "--json"},
        {"diff", a, b, "--json"}, {"plan", a, "--json"}};
    for (const auto& args : commands) {
        QProcess process;
        process.start(qEnvironmentVariable("REPACK_CLI"), args);
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitStatus(), QProcess::NormalExit); // dump() threw: terminate()
        const QByteArray err = process.readAllStandardError();
        QVERIFY2(process.exitCode() == 0, qPrintable(args.join(' ') + ": " + err));
        const QByteArray out = process.readAllStandardOutput();
        QJsonParseError error;
        QJsonDocument::fromJson(out, &error);
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        QVERIFY2(out.contains("\xef\xbf\xbd"), qPrintable(args[0])); // U+FFFD
    }
}

QTEST_GUILESS_MAIN(TestJsonStream)
#include "tst_json_stream.moc"
