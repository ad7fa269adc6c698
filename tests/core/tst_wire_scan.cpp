// The wire scanner (core/model/wire_scan.h) and Model::load on top of it, checked against
// protobuf's own full parse as the oracle: the skeleton with its payloads put back is the model
// protobuf parses, and the tensor index, problems, every tensor's bytes and saved files are the
// same whether the model was parsed whole or from the skeleton.
#include "core/model/model.h"
#include "core/model/tensor_index.h"
#include "core/model/tensor_protos.h"
#include "core/model/wire_scan.h"
#include "core/posix_file.h"
#include "core/save/model_writer.h"
#include "core/save/save.h"
#include "tests/support/model_builder.h"
#include "tests/support/result_checks.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <QDirIterator>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace repack;
using namespace fixtures;

namespace {

const QString kDataDir = QStringLiteral("/usr/share/libonnx-testdata/data");

std::string canonical(const onnx::ModelProto& model)
{
    std::string out;
    {
        google::protobuf::io::StringOutputStream stream(&out);
        google::protobuf::io::CodedOutputStream coded(&stream);
        coded.SetSerializationDeterministic(true);
        model.ByteSizeLong(); // the cached sizes SerializeWithCachedSizes uses
        model.SerializeWithCachedSizes(&coded);
    }
    return out;
}

std::span<const std::byte> spanOf(const std::string& bytes)
{
    return std::as_bytes(std::span(bytes.data(), bytes.size()));
}

// Hand-written wire format, for field orders and encodings protobuf's serializer never writes.
std::string varint(uint64_t v)
{
    std::string out;
    while (v >= 0x80) {
        out.push_back(char((v & 0x7f) | 0x80));
        v >>= 7;
    }
    out.push_back(char(v));
    return out;
}
std::string tag(uint32_t field, int wireType)
{
    return varint((uint64_t(field) << 3) | uint64_t(wireType));
}
std::string len(uint32_t field, const std::string& value)
{
    return tag(field, 2) + varint(value.size()) + value;
}
std::string num(uint32_t field, uint64_t value)
{
    return tag(field, 0) + varint(value);
}
std::string fixed32(uint32_t field, uint32_t value)
{
    std::string out = tag(field, 5);
    for (int i = 0; i < 4; ++i)
        out.push_back(char((value >> (8 * i)) & 0xff));
    return out;
}
std::string fixed64(uint32_t field, uint64_t value)
{
    std::string out = tag(field, 1);
    for (int i = 0; i < 8; ++i)
        out.push_back(char((value >> (8 * i)) & 0xff));
    return out;
}

// TensorProto fields: dims 1, data_type 2, float_data 4, name 8, raw_data 9.
std::string uint8Tensor(const std::string& name, const std::string& raw)
{
    return num(1, raw.size()) + num(2, 2) + len(8, name) + len(9, raw);
}
// ModelProto: ir_version 1, graph 7, opset_import 8. GraphProto: node 1, name 2, initializer 5.
std::string modelWithGraph(const std::string& graph)
{
    return num(1, 8) + len(8, len(1, "") + num(2, 17)) + len(7, graph);
}

// What the model's tensors and problems look like, field by field.
std::string describe(const Model& model)
{
    std::string out;
    for (size_t i = 0; i < model.tensors().size(); ++i) {
        const TensorInfo& t = model.tensors()[i];
        out += t.qualifiedName() + " " + std::string(kindName(t.kind)) + " dtype "
            + std::to_string(t.dataType) + " shape";
        for (auto d : t.shape)
            out += " " + std::to_string(d);
        out += " elements " + (t.elements() ? std::to_string(*t.elements()) : "-") + " bytes "
            + (t.bytes ? std::to_string(*t.bytes) : "-") + " " + std::string(storageName(t.storage))
            + " error " + std::to_string(t.hasError);
        if (t.isExternal())
            out += " " + t.external->location() + "@" + std::to_string(t.external->offset) + "+"
                + (t.external->length ? std::to_string(*t.external->length) : "-") + " "
                + *t.external->checksum + " " + t.external->resolvedPath().string() + " file "
                + std::to_string(bool(t.external->file()));
        auto bytes = model.read(i);
        out += bytes ? " read "
                + std::string(
                    reinterpret_cast<const char*>(bytes->bytes().data()), bytes->bytes().size())
                     : " error " + bytes.error().message;
        out += "\n";
    }
    for (const auto& p : model.problems())
        out += "problem " + std::to_string(int(p.severity)) + " " + p.tensor + " " + p.code + " "
            + p.message + "\n";
    return out;
}

// Which tensors readers need while building the graph, and which no node uses.
std::string describeGraphBuild(const Model& model)
{
    std::string out;
    for (const TensorInfo& t : model.tensors())
        out += t.qualifiedName() + ": " + *t.readAtGraphBuild
            + (t.unusedInitializer ? " unused" : "") + "\n";
    return out;
}

// The old path: protobuf parses the whole file, tensors read from the protos.
std::unique_ptr<Model> oracleModel(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return nullptr;
    const QByteArray bytes = file.readAll();
    auto proto = std::make_unique<onnx::ModelProto>();
    if (!proto->ParseFromArray(bytes.constData(), int(bytes.size())))
        return nullptr;
    return Model::fromProto(std::move(proto), QFileInfo(path).absolutePath().toStdString());
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// `bytes` scanned with every main graph initializer and node it may leave out left out, the
// skeleton parsed and serialized by protobuf, and the ones left out spliced back in: what a
// save of a model whose inline tensors stay inline writes. `leftOut` gets how many were.
std::optional<std::string> leftOutAndBack(
    const std::string& bytes, size_t* leftOut = nullptr, uint64_t minStripped = 1024)
{
    const ElideRule all{[](uint64_t) { return true; }};
    auto scan = scanModel(spanOf(bytes), "m", minStripped, all);
    if (!scan)
        return std::nullopt;
    onnx::ModelProto skeleton;
    if (!skeleton.ParseFromString(scan->changed ? scan->skeleton : bytes))
        return std::nullopt;
    for (const auto& p : scan->payloads) { // in file order: the last one wins
        onnx::TensorProto* t = tensorAt(skeleton, p.path);
        if (!t)
            return std::nullopt;
        t->set_raw_data(bytes.substr(p.offset, p.length));
    }
    const std::string serialized = canonical(skeleton);
    const PayloadRule none = [](std::span<const std::byte>) -> std::optional<PayloadReplacement> {
        return std::nullopt;
    };
    auto back = spliceModel(spanOf(serialized), "m", none, &scan->elided);
    if (!back || !back->inserts.empty() || back->size != back->bytes.size())
        return std::nullopt;
    if (leftOut)
        *leftOut = scan->elided.size();
    return back->bytes;
}

// A length-delimited field whose length prefix takes two bytes where one would do.
std::string paddedLen(uint32_t field, const std::string& value)
{
    return tag(field, 2) + char(0x80 | value.size()) + char(0) + value;
}

bool writeFile(const QString& path, const std::string& bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly)
        && file.write(bytes.data(), qint64(bytes.size())) == qint64(bytes.size());
}

} // namespace

class TestWireScan : public QObject {
    Q_OBJECT
private slots:
    void skeletonRematerializes_data();
    void skeletonRematerializes();
    void loadAgreesWithFullParse_data();
    void loadAgreesWithFullParse();
    void indexReadsFieldsAsProtobuf_data();
    void indexReadsFieldsAsProtobuf();
    void lastRawDataWins();
    void mergedMessagesKeepCounting();
    void malformedIsClearError_data();
    void malformedIsClearError();
    void neverReadsPastTheSpan();
    void failedSaveLeavesSkeleton();
    void testdataSkeletons();
    void testdataModelsAgree();
    void writerSplicesEveryPlace_data();
    void writerSplicesEveryPlace();
    void testdataWriterAgrees();
    void writerRefusesPast2GiB();
    void leftOutInitializersGoBack_data();
    void leftOutInitializersGoBack();
    void testdataLeftOutGoBack();
    void saveLeavingOutAgrees();
    void leftOutTensorProtobufRefuses();
    void fuzzWireScanLongTag();
    void fuzzWireScanPaddedLength();
    void fuzzModelLoadFifoHang();

private:
    // Scans `bytes` with `minStripped`, checks the skeleton against protobuf's parse of `bytes`
    // and returns the number of payloads stripped.
    static int checkSkeleton(const std::string& bytes, uint64_t minStripped, const QString& what);
    static void checkLoad(const QString& path);
    // Writes the skeleton of `bytes` with its payloads spliced back by writeModel and returns
    // whether the file is byte for byte protobuf's deterministic serialization of `bytes`.
    static bool checkWriter(const std::string& bytes, const QString& what);
};

bool TestWireScan::checkWriter(const std::string& bytes, const QString& what)
{
    onnx::ModelProto oracle;
    if (!oracle.ParseFromString(bytes))
        return false;
    auto scan = scanModel(spanOf(bytes), what.toStdString(), 1);
    if (!scan)
        return false;
    onnx::ModelProto skeleton;
    if (!skeleton.ParseFromString(scan->changed ? scan->skeleton : bytes))
        return false;
    std::map<onnx::TensorProto*, RawPayload> last; // a tensor's raw_data is its last payload
    for (const auto& p : scan->payloads) {
        onnx::TensorProto* t = tensorAt(skeleton, p.path);
        if (p.stripped)
            last[t] = p;
        else
            last.erase(t);
    }
    std::vector<SplicedPayload> payloads;
    std::vector<uint64_t> sources;
    for (const auto& [tensor, p] : last) {
        payloads.push_back({tensor, p.length});
        sources.push_back(p.offset);
    }
    QTemporaryDir dir;
    const std::string path = dir.filePath("out.onnx").toStdString();
    auto fd = UniqueFd::create(path, true);
    if (!fd)
        return false;
    int copies = 0;
    auto written = writeModel(
        skeleton, fd->get(), path, payloads, [&](size_t i, int target, uint64_t offset) {
            ++copies;
            return pwriteAll(
                target, spanOf(bytes).subspan(sources[i], payloads[i].length), offset, path);
        });
    if (!written) {
        qWarning("%s: %s", qPrintable(what), written.error().message.c_str());
        return false;
    }
    QFile out(QString::fromStdString(path));
    if (!out.open(QIODevice::ReadOnly))
        return false;
    const std::string expected = canonical(oracle);
    const bool same = out.readAll().toStdString() == expected && written->bytes == expected.size()
        && copies == int(payloads.size());
    // The model is as it was: spliced tensors empty again.
    for (const auto& p : payloads)
        if (!p.tensor->raw_data().empty())
            return false;
    if (!same)
        qWarning("%s: the streamed model differs from protobuf's serialization", qPrintable(what));
    return same;
}

int TestWireScan::checkSkeleton(const std::string& bytes, uint64_t minStripped, const QString& what)
{
    onnx::ModelProto oracle;
    if (!oracle.ParseFromString(bytes)) {
        qWarning("%s: protobuf does not parse it", qPrintable(what));
        return -1;
    }
    auto scan = scanModel(spanOf(bytes), what.toStdString(), minStripped);
    if (!scan) {
        qWarning("%s: %s", qPrintable(what), scan.error().message.c_str());
        return -1;
    }
    const std::string& skeletonBytes = scan->changed ? scan->skeleton : bytes;
    onnx::ModelProto skeleton;
    if (!skeleton.ParseFromString(skeletonBytes)) {
        qWarning("%s: the skeleton does not parse", qPrintable(what));
        return -1;
    }
    int stripped = 0;
    uint64_t strippedBytes = 0;
    for (const auto& p : scan->payloads) {
        onnx::TensorProto* t = tensorAt(skeleton, p.path);
        if (!t) {
            qWarning("%s: payload at %llu has no tensor", qPrintable(what),
                (unsigned long long)p.offset);
            return -1;
        }
        if (p.stripped) {
            ++stripped;
            strippedBytes += p.length;
        }
        // In file order, every payload: the last one wins as in protobuf.
        t->set_raw_data(bytes.substr(p.offset, p.length));
    }
    if (canonical(skeleton) != canonical(oracle)) {
        qWarning("%s: the rematerialized skeleton differs from protobuf's parse", qPrintable(what));
        return -1;
    }
    if (scan->changed != (stripped > 0) || (scan->changed && skeletonBytes.size() >= bytes.size())
        || skeletonBytes.size() + strippedBytes > bytes.size()) {
        qWarning("%s: skeleton of %zu bytes for %zu stripped from %zu", qPrintable(what),
            skeletonBytes.size(), size_t(strippedBytes), bytes.size());
        return -1;
    }
    return stripped;
}

void TestWireScan::checkLoad(const QString& path)
{
    auto loaded = Model::load(path.toStdString());
    QVERIFY_OK(loaded);
    auto oracle = oracleModel(path);
    QVERIFY(oracle);
    Model& model = **loaded;
    QCOMPARE(describe(model), describe(*oracle));
    // Materialized, the protos are exactly protobuf's; released, the skeleton again.
    const std::string skeleton = canonical(model.proto());
    QVERIFY(model.materializeInline().ok());
    QCOMPARE(canonical(model.proto()), canonical(oracle->proto()));
    model.releaseInline();
    QCOMPARE(canonical(model.proto()), skeleton);
    QCOMPARE(describe(model), describe(*oracle));
}

// Models of every shape the index knows, written by protobuf or by hand.
void TestWireScan::skeletonRematerializes_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("stripped"); // payloads stripped at minimum 1 byte

    const std::string big(3000, 'b'), small(10, 's');
    {
        onnx::ModelProto model = emptyModel();
        onnx::GraphProto& g = *model.mutable_graph();
        *g.add_initializer() = rawTensor("w", 1, {1000});
        *g.add_initializer() = typedTensor("typed", 1, {4});
        *g.add_sparse_initializer() = sparseTensor("sv", "si", {400}, 300);
        addConstant(g, "c", rawTensor("", 2, {2000}));
        addTensorsAttribute(addNode(g, "Custom", ""), "ws",
            {rawTensor("", 2, {5}), typedTensor("t1", 7, {3}), rawTensor("", 3, {4096})});
        onnx::NodeProto& ifNode = addNode(g, "If", "if0");
        onnx::GraphProto& then = addSubgraph(ifNode, "then_branch");
        *then.add_initializer() = rawTensor("then_w", 1, {600});
        onnx::GraphProto& body = addSubgraph(addNode(then, "Loop", ""), "body");
        addConstant(body, "", rawTensor("deep", 6, {700}));
        auto& branches = addGraphsAttribute(addNode(g, "Custom", "multi"), "branches", 2);
        *branches.mutable_graphs(1)->add_initializer() = rawTensor("g1", 4, {900});
        onnx::NodeProto& sp = addNode(g, "Constant", "sp");
        auto* attr = sp.add_attribute();
        attr->set_name("sparse_value");
        attr->set_type(onnx::AttributeProto::SPARSE_TENSOR);
        *attr->mutable_sparse_tensor() = sparseTensor("", "", {600}, 200);
        auto* list = sp.add_attribute();
        list->set_name("sparse_list");
        *list->add_sparse_tensors() = sparseTensor("a", "", {600}, 100);
        onnx::FunctionProto& fn = addFunction(model, "custom.fn", "Fn");
        onnx::NodeProto& fc = addNode(*fn.mutable_node(), "Constant", "");
        auto* value = fc.add_attribute();
        value->set_name("value");
        *value->mutable_t() = rawTensor("fnw", 1, {512});
        // graph/then/body/w, sv, si, c, ws[0], ws[2], then_w, deep, g1, sparse x4, fnw
        QTest::addRow("every place, protobuf's order")
            << QByteArray::fromStdString(model.SerializeAsString()) << 14;
    }
    {
        // Fields in reverse order everywhere: raw_data first, graph before ir_version, nodes
        // before initializers, the graph's name last.
        const std::string tensor = len(9, big) + len(8, "w") + num(2, 2) + num(1, big.size());
        const std::string node
            = len(5, len(5, len(9, small) + num(2, 2) + num(1, 10)) + len(1, "value"))
            + len(4, "Constant") + len(2, "out");
        const std::string graph = len(1, node) + len(5, tensor) + len(2, "g");
        const std::string model = len(7, graph) + len(8, len(1, "") + num(2, 17)) + num(1, 8);
        QTest::addRow("fields in any order") << QByteArray::fromStdString(model) << 2;
    }
    {
        // Unknown fields of every wire type around and inside tensors, and a length-delimited
        // unknown field whose bytes look like a raw_data field: copied, never stripped.
        const std::string fake = len(9, big);
        const std::string tensor = num(77, 5) + uint8Tensor("w", big) + fixed32(78, 7)
            + fixed64(79, 9) + len(80, fake) + tag(81, 3) + num(1, 2) + tag(81, 4);
        const std::string graph = len(99, fake) + len(5, tensor) + num(98, 1) + len(5, tensor);
        QTest::addRow("unknown fields")
            << QByteArray::fromStdString(modelWithGraph(graph) + len(1000, fake)) << 2;
    }
    {
        // float_data (4) packed and unpacked, int64 dims repeated unpacked; no raw_data.
        std::string packed;
        for (int i = 0; i < 4; ++i)
            packed += std::string("\x00\x00\x80\x3f", 4);
        const std::string a = num(1, 4) + num(2, 1) + len(8, "packed") + len(4, packed);
        std::string b = num(1, 2) + num(1, 2) + num(2, 1) + len(8, "unpacked");
        for (int i = 0; i < 4; ++i)
            b += fixed32(4, 0x3f800000);
        QTest::addRow("packed and unpacked typed data")
            << QByteArray::fromStdString(modelWithGraph(len(5, a) + len(5, b))) << 0;
    }
    {
        const std::string tensor
            = num(1, 10) + num(2, 2) + len(8, "w") + len(9, big) + len(9, small);
        QTest::addRow("raw_data twice, big then small")
            << QByteArray::fromStdString(modelWithGraph(len(5, tensor))) << 2;
        const std::string other
            = num(1, 3000) + num(2, 2) + len(8, "w") + len(9, small) + len(9, big);
        QTest::addRow("raw_data twice, small then big")
            << QByteArray::fromStdString(modelWithGraph(len(5, other))) << 2;
    }
    {
        // A singular message twice: protobuf merges them (graph, attribute t, sparse values).
        const std::string graph1 = len(5, uint8Tensor("a", big)) + len(2, "first");
        const std::string graph2 = len(5, uint8Tensor("b", small)) + len(5, uint8Tensor("c", big));
        const std::string attr = len(1, "value") + len(5, uint8Tensor("t", small))
            + len(5, len(9, big) + len(8, "t2"));
        const std::string node = len(4, "Constant") + len(5, attr);
        const std::string graph3 = len(1, node);
        const std::string model = num(1, 8) + len(7, graph1) + len(7, graph2) + len(7, graph3);
        QTest::addRow("singular messages merged") << QByteArray::fromStdString(model) << 5;
    }
    {
        // Long length prefixes that shrink by several bytes, nested three deep.
        const std::string huge(200000, 'h');
        const std::string attrGraph = len(5, uint8Tensor("inner", huge));
        const std::string attr = len(1, "body") + len(6, attrGraph) + num(20, 5);
        const std::string graph
            = len(1, len(4, "Loop") + len(5, attr)) + len(5, uint8Tensor("outer", huge));
        QTest::addRow("lengths shrink at every level")
            << QByteArray::fromStdString(modelWithGraph(graph)) << 2;
    }
}

void TestWireScan::skeletonRematerializes()
{
    QFETCH(QByteArray, bytes);
    QFETCH(int, stripped);
    const std::string model = bytes.toStdString();
    QCOMPARE(checkSkeleton(model, 1, "1 byte"), stripped);
    QVERIFY(checkSkeleton(model, 0, "0 bytes") == stripped);
    QVERIFY(checkSkeleton(model, 1024, "1 KiB") >= 0);
    QVERIFY(checkSkeleton(model, ~0ull, "nothing") == 0);
}

void TestWireScan::loadAgreesWithFullParse_data()
{
    skeletonRematerializes_data();
}

void TestWireScan::loadAgreesWithFullParse()
{
    QFETCH(QByteArray, bytes);
    QTemporaryDir dir;
    const QString path = dir.filePath("m.onnx");
    QVERIFY(writeFile(path, bytes.toStdString()));
    checkLoad(path);
    if (QTest::currentTestFailed())
        return;
    // Saves give the same files whether the model was parsed whole or from the skeleton.
    auto loaded = Model::load(path.toStdString());
    QVERIFY(loaded.ok());
    auto oracle = oracleModel(path);
    for (const char* sub : {"new", "old"})
        QVERIFY(QDir(dir.path()).mkdir(sub));
    SaveOptions options;
    options.allowCorrupt = true;
    auto a = save(**loaded, dir.filePath("new/out.onnx").toStdString(), options);
    auto b = save(*oracle, dir.filePath("old/out.onnx").toStdString(), options);
    QCOMPARE(a.ok(), b.ok());
    QCOMPARE(hashFolder(dir.filePath("new")), hashFolder(dir.filePath("old")));
    // Payloads that stayed inline were spliced into the new file and are read from there.
    QVERIFY((*loaded)->materializeInline().ok());
    QCOMPARE(canonical((*loaded)->proto()), canonical(oracle->proto()));
    (*loaded)->releaseInline();
    QCOMPARE(readAllTensors(**loaded), readAllTensors(*oracle));
}

// The index reads fields at the wire level (core/model/tensor_index.h) as protobuf's parse does:
// encodings protobuf's serializer never writes, checked against the index of protobuf's parse.
void TestWireScan::indexReadsFieldsAsProtobuf_data()
{
    QTest::addColumn<QByteArray>("bytes");
    const std::string floats = fixed32(4, 0x3f800000) + fixed32(4, 0x40000000);
    const std::string packedFloats = len(4, std::string(8, '\x01'));
    auto add = [](const char* name, const std::string& model) {
        QTest::addRow("%s", name) << QByteArray::fromStdString(model);
    };
    auto constant = [](const std::string& attributeBody) {
        // NodeProto: output 2, op_type 4, attribute 5; AttributeProto: name 1, t 5.
        return len(1, len(2, "c") + len(4, "Constant") + len(5, len(1, "value") + attributeBody));
    };
    add("unpacked dims",
        modelWithGraph(len(
            5, num(1, 2) + num(1, 3) + num(2, 1) + len(8, "w") + len(9, std::string(24, 'x')))));
    add("packed and unpacked dims mixed",
        modelWithGraph(len(5,
            len(1, varint(2) + varint(3)) + num(1, 4) + num(2, 2) + len(8, "w")
                + len(9, std::string(24, 'x')))));
    add("name given as a varint is an unknown field",
        modelWithGraph(len(5, num(1, 1) + num(2, 2) + num(8, 5) + len(9, "x"))));
    add("last name wins",
        modelWithGraph(
            len(5, num(1, 1) + num(2, 2) + len(8, "first") + len(9, "x") + len(8, "second"))));
    add("unknown data_location value keeps the known one",
        modelWithGraph(len(5,
            num(1, 1) + num(2, 2) + len(8, "w") + len(13, len(1, "location") + len(2, "w.bin"))
                + num(14, 1) + num(14, 7))));
    add("float_data unpacked and packed",
        modelWithGraph(len(5, num(1, 4) + num(2, 1) + len(8, "f") + floats + packedFloats)));
    add("string_data",
        modelWithGraph(len(5, num(1, 2) + num(2, 8) + len(8, "s") + len(6, "abc") + len(6, "de"))));
    add("int64_data packed",
        modelWithGraph(len(5,
            num(1, 3) + num(2, 7) + len(8, "i")
                + len(7, varint(1) + varint(300) + varint(70000)))));
    add("external_data with a key given twice",
        modelWithGraph(len(5,
            num(1, 4) + num(2, 2) + len(8, "e") + len(13, len(1, "location") + len(2, "a.bin"))
                + len(13, len(1, "location") + len(2, "b.bin")) + num(14, 1))));
    add("graph given twice: its initializers are one list",
        num(1, 8) + len(7, len(5, num(1, 1) + num(2, 2) + len(8, "a") + len(9, "x")))
            + len(7, len(5, num(1, 1) + num(2, 2) + len(8, "b") + len(9, "y"))));
    add("attribute tensor given twice is one tensor",
        modelWithGraph(
            constant(len(5, len(8, "v") + num(1, 2)) + len(5, num(2, 2) + len(9, "ab")))));
    add("sparse initializer values and indices split",
        modelWithGraph(len(15,
            len(1, num(1, 2) + num(2, 1))
                + len(2, num(1, 2) + num(2, 7) + len(9, std::string(16, '\0')))
                + len(1, len(8, "sv") + len(9, std::string(8, '\0'))) + len(3, varint(8)))));
    add("Reshape's shape from an outer graph, node name given twice",
        modelWithGraph(
            len(5, num(1, 2) + num(2, 7) + len(8, "shape") + len(9, std::string(16, '\0')))
            + len(1,
                len(3, "first") + len(4, "If")
                    + len(5,
                        len(1, "then_branch")
                            + len(6,
                                len(1,
                                    len(1, "x") + len(1, "shape") + len(2, "y") + len(4, "Reshape")
                                        + len(3, "r") + len(3, "r2")))))));
    // fuzz tensor_index: protobuf reads an enum as int32, keeping the varint's low 32 bits.
    add("data_location past 32 bits keeps its low 32 bits: EXTERNAL",
        modelWithGraph(len(5,
            num(1, 4) + num(2, 2) + len(8, "e") + len(13, len(1, "location") + len(2, "w.bin"))
                + num(14, (uint64_t(1) << 32) + 1))));
    add("data_location past 32 bits keeps its low 32 bits: DEFAULT",
        modelWithGraph(len(5,
            num(1, 4) + num(2, 2) + len(8, "e") + len(9, "abcd") + num(14, 1)
                + num(14, uint64_t(1) << 32))));
}

void TestWireScan::indexReadsFieldsAsProtobuf()
{
    QFETCH(QByteArray, bytes);
    onnx::ModelProto parsed;
    QVERIFY(parsed.ParseFromArray(bytes.constData(), int(bytes.size())));
    QTemporaryDir dir;
    const QString path = dir.filePath("m.onnx");
    QVERIFY(writeFile(path, bytes.toStdString()));
    checkLoad(path);
    auto model = Model::load(path.toStdString());
    QVERIFY(model.ok());
    // Field by field against protobuf's own parse.
    const auto protos = tensorProtos(parsed);
    const auto& tensors = (*model)->tensors();
    QCOMPARE(tensors.size(), protos.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorInfo& t = tensors[i];
        const onnx::TensorProto& p = *protos[i];
        QVERIFY(t.proto == nullptr); // indexed without protobuf
        if (!p.name().empty())
            QCOMPARE(t.name, p.name());
        QCOMPARE(t.dataType, p.data_type());
        QCOMPARE(t.shape.toVector(), std::vector<int64_t>(p.dims().begin(), p.dims().end()));
        QCOMPARE(t.isExternal(), p.data_location() == onnx::TensorProto::EXTERNAL);
        QCOMPARE(t.storage == Storage::Raw, !t.isExternal() && p.has_raw_data());
        std::string location;
        for (const auto& entry : p.external_data())
            if (entry.key() == "location")
                location = entry.value();
        QCOMPARE(t.external->location(), t.isExternal() ? location : std::string());
        if (t.storage == Storage::Raw) {
            auto bytes = (*model)->read(i);
            QVERIFY(bytes.ok());
            QCOMPARE(std::string(reinterpret_cast<const char*>(bytes->bytes().data()),
                         bytes->bytes().size()),
                p.raw_data());
        }
    }
    QCOMPARE(QString::fromStdString(describeGraphBuild(**model)),
        QString::fromStdString(describeGraphBuild(*oracleModel(path))));
}

// Protobuf keeps the last raw_data; a small last one stays in the proto, a big earlier one must
// not come back from the file.
void TestWireScan::lastRawDataWins()
{
    const std::string big(5000, 'B'), small(4, 's');
    QTemporaryDir dir;
    const QString path = dir.filePath("m.onnx");
    const std::string tensor = num(1, 4) + num(2, 2) + len(8, "w") + len(9, big) + len(9, small);
    QVERIFY(writeFile(path, modelWithGraph(len(5, tensor))));
    auto model = Model::load(path.toStdString());
    QVERIFY(model.ok());
    QCOMPARE((*model)->inFileCount(), size_t(0));
    auto bytes = (*model)->read(0);
    QVERIFY(bytes.ok());
    QCOMPARE(std::string(reinterpret_cast<const char*>(bytes->bytes().data()), 4), small);
    QVERIFY((*model)->problems().empty());

    const std::string other = num(1, 5000) + num(2, 2) + len(8, "w") + len(9, small) + len(9, big);
    QVERIFY(writeFile(path, modelWithGraph(len(5, other))));
    model = Model::load(path.toStdString());
    QVERIFY(model.ok());
    QCOMPARE((*model)->inFileCount(), size_t(1));
    QVERIFY((*model)->tensors()[0].inlineRange);
    QCOMPARE((*model)->proto().graph().initializer(0).raw_data(), std::string());
    bytes = (*model)->read(0);
    QVERIFY(bytes.ok());
    QCOMPARE(bytes->bytes().size(), size_t(5000));
    QVERIFY((*model)->problems().empty());
}

// The second occurrence of a singular graph continues the first's initializers: "c" is
// initializer 2 of the merged graph, not 1.
void TestWireScan::mergedMessagesKeepCounting()
{
    const std::string big1(2000, '1'), big2(3000, '2');
    const std::string model = num(1, 8) + len(7, len(5, uint8Tensor("a", big1)))
        + len(7, len(5, uint8Tensor("b", "xy")) + len(5, uint8Tensor("c", big2)));
    auto scan = scanModel(spanOf(model), "m", 1024);
    QVERIFY(scan.ok());
    QCOMPARE(scan->payloads.size(), size_t(2)); // "b" keeps its payload, and has no other
    const std::vector<WireStep> c{{7, 0}, {5, 2}};
    QVERIFY(scan->payloads[1].path == c);
    QTemporaryDir dir;
    QVERIFY(writeFile(dir.filePath("m.onnx"), model));
    checkLoad(dir.filePath("m.onnx"));
}

void TestWireScan::malformedIsClearError_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("what");
    auto row = [](const char* name, const std::string& bytes, const char* what) {
        QTest::addRow("%s", name) << QByteArray::fromStdString(bytes) << QString(what);
    };
    row("truncated varint", num(1, 8) + "\x3a\x80", "truncated varint at byte 3");
    row("truncated tag", num(1, 8) + "\xba", "truncated varint at byte 2");
    row("length past the end", num(1, 8) + "\x3a\x05\x00",
        "length 5 runs past the end of its message (byte 4) at byte 3");
    row("length past the enclosing message", num(1, 8) + len(7, tag(5, 2) + varint(10) + "abc"),
        "length 10 runs past the end of its message");
    row("raw_data past its tensor", modelWithGraph(len(5, tag(9, 2) + varint(100) + "x")),
        "length 100 runs past the end of its message");
    row("invalid wire type", num(1, 8) + len(7, tag(3, 7)), "invalid wire type 7");
    row("field number 0", num(1, 8) + len(7, "\x02\x00"), "field number 0");
    row("stray end-group", num(1, 8) + len(7, tag(4, 4)), "end-group tag without a group");
    row("unterminated group", num(1, 8) + len(7, tag(40, 3) + num(1, 1)),
        "group without its end-group tag");
    row("truncated fixed64", num(1, 8) + len(7, tag(40, 1) + "abc"), "truncated fixed-width value");
    row("overlong varint", num(1, 8) + std::string(11, '\xff'), "varint longer than 10 bytes");
    std::string deep = len(5, uint8Tensor("w", "x"));
    for (int i = 0; i < 60; ++i) // graph -> node -> attribute -> g -> ... past 100 levels
        deep = len(1, len(5, len(6, deep)));
    row("nesting past protobuf's limit", modelWithGraph(deep), "nested deeper than 100");
}

void TestWireScan::malformedIsClearError()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, what);
    auto scan = scanModel(spanOf(bytes.toStdString()), "/models/bad.onnx");
    QVERIFY(!scan.ok());
    const QString message = QString::fromStdString(scan.error().message);
    QVERIFY2(message.startsWith("/models/bad.onnx: not a valid ONNX model"), qPrintable(message));
    QVERIFY2(message.contains(what), qPrintable(message));
    QVERIFY2(message.contains(" at byte "), qPrintable(message));
    onnx::ModelProto oracle;
    QVERIFY(!oracle.ParseFromString(bytes.toStdString())); // protobuf refuses it too

    QTemporaryDir dir;
    QVERIFY(writeFile(dir.filePath("bad.onnx"), bytes.toStdString()));
    auto model = Model::load(dir.filePath("bad.onnx").toStdString());
    QVERIFY(!model.ok());
    QVERIFY2(contains(model.error().message, what.toStdString()), model.error().message.c_str());
}

// The span ends mid-varint and mid-length; the bytes after it would complete both.
void TestWireScan::neverReadsPastTheSpan()
{
    const std::string inside = num(1, 8) + "\x3a\x80";
    const std::string buffer = inside + "\x01" + std::string(128, '\0');
    auto scan = scanModel(spanOf(buffer).first(inside.size()), "m");
    QVERIFY(!scan.ok());
    QVERIFY2(contains(scan.error().message, "truncated varint"), scan.error().message.c_str());
    const std::string graph = len(5, uint8Tensor("w", std::string(50, 'w')));
    const std::string whole = modelWithGraph(graph);
    for (size_t cut = 0; cut < whole.size(); ++cut) {
        auto part = scanModel(spanOf(whole).first(cut), "m");
        onnx::ModelProto oracle;
        QCOMPARE(part.ok(), oracle.ParseFromString(whole.substr(0, cut)));
    }
}

// A save that fails before its commit point leaves the model reading its payloads from the
// file, its protos as they were.
void TestWireScan::failedSaveLeavesSkeleton()
{
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", {5000, 3000, 10}, ~0ull, "unused");
    auto model = loadModel(path);
    QVERIFY(model);
    QCOMPARE(model->inFileCount(), size_t(2));
    const std::string before = canonical(model->proto());
    const auto tensors = readAllTensors(*model);
    SaveOptions options;
    options.threshold = 4000;
    qputenv("ONNX_REPACK_FAIL_AT", "rename-model-temp"); // the commit itself fails
    auto result = save(*model, dir.filePath("out.onnx").toStdString(), options);
    qunsetenv("ONNX_REPACK_FAIL_AT");
    QVERIFY_FAILS_WITH(result, "(injected)");
    QCOMPARE(canonical(model->proto()), before);
    QCOMPARE(model->inFileCount(), size_t(2));
    QCOMPARE(readAllTensors(*model), tensors);
    // And one that succeeds: the payload that stays inline is read from the new file, the
    // other from its data file.
    QVERIFY(save(*model, dir.filePath("out.onnx").toStdString(), options).ok());
    QCOMPARE(model->inFileCount(), size_t(1));
    QVERIFY(model->inFileSource());
    QCOMPARE(QString::fromStdString(model->inFileSource()->path().string()),
        QFileInfo(dir.filePath("out.onnx")).absoluteFilePath());
    QCOMPARE(readAllTensors(*model), tensors);
    for (const TensorInfo& t : model->tensors()) // never materialized
        QVERIFY(!t.inlineRange || t.proto->raw_data().empty());
    auto reloaded = loadModel(dir.filePath("out.onnx"));
    QVERIFY(reloaded);
    QCOMPARE(readAllTensors(*reloaded), tensors);
}

void TestWireScan::testdataSkeletons()
{
    if (!QFileInfo(kDataDir).isDir())
        QSKIP("libonnx-testdata is not installed");
    QDirIterator it(kDataDir, {"*.onnx"}, QDir::Files, QDirIterator::Subdirectories);
    int models = 0, failures = 0;
    long payloads = 0;
    while (it.hasNext()) {
        const QString path = it.next();
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const std::string bytes = file.readAll().toStdString();
        const int stripped = checkSkeleton(bytes, 0, path);
        failures += stripped < 0;
        payloads += std::max(stripped, 0);
        ++models;
    }
    qInfo("%d models, %ld payloads stripped and put back", models, payloads);
    QVERIFY(models > 1000);
    QVERIFY(payloads > 100); // most of its tensors are a few bytes
    QCOMPARE(failures, 0);
}

void TestWireScan::testdataModelsAgree()
{
    if (!QFileInfo(kDataDir).isDir())
        QSKIP("libonnx-testdata is not installed");
    QDirIterator it(kDataDir, {"*.onnx"}, QDir::Files, QDirIterator::Subdirectories);
    int models = 0, lazy = 0;
    while (it.hasNext()) {
        const QString path = it.next();
        checkLoad(path);
        if (QTest::currentTestFailed()) {
            qWarning("in %s", qPrintable(path));
            return;
        }
        auto model = Model::load(path.toStdString());
        lazy += (*model)->inFileCount() > 0;
        ++models;
    }
    qInfo("%d models agree, %d of them with payloads left in the file", models, lazy);
    QVERIFY(lazy > 0);
}

void TestWireScan::writerSplicesEveryPlace_data()
{
    skeletonRematerializes_data();
}

void TestWireScan::writerSplicesEveryPlace()
{
    QFETCH(QByteArray, bytes);
    QVERIFY(checkWriter(bytes.toStdString(), QTest::currentDataTag()));
}

void TestWireScan::testdataWriterAgrees()
{
    if (!QFileInfo(kDataDir).isDir())
        QSKIP("libonnx-testdata is not installed");
    QDirIterator it(kDataDir, {"*.onnx"}, QDir::Files, QDirIterator::Subdirectories);
    int models = 0, failures = 0;
    while (it.hasNext()) {
        const QString path = it.next();
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        failures += !checkWriter(file.readAll().toStdString(), path);
        ++models;
    }
    QVERIFY(models > 1000);
    QCOMPARE(failures, 0);
}

// Initializers left out of the parsed model and spliced back land where they were: protobuf's
// own bytes come back byte for byte, hand-written ones parse to the same model.
void TestWireScan::leftOutInitializersGoBack_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<bool>("protobufWrote");
    QTest::addColumn<int>("leftOut");

    onnx::ModelProto built = emptyModel();
    auto& graph = *built.mutable_graph();
    for (int i = 0; i < 30; ++i)
        *graph.add_initializer() = i % 3 == 0
            ? typedTensor("typed" + std::to_string(i), 1, {2})
            : rawTensor(i == 7 ? "" : "raw" + std::to_string(i), 2, {3});
    *graph.add_initializer() = rawTensor("big", 2, {2000}); // its payload is stripped: kept
    *graph.add_initializer() = rawTensor("after", 2, {1});
    addConstant(graph, "c", rawTensor("attr", 2, {2}));
    const std::string canonicalBytes = canonical(built);
    QTest::newRow("protobuf's") << QByteArray::fromStdString(canonicalBytes) << true << 30;

    const std::string a = uint8Tensor("a", "1"), b = uint8Tensor("b", "22"),
                      c = uint8Tensor("c", "333"), d = uint8Tensor("d", std::string(1500, 'd'));
    const std::string node = len(4, "Identity") + len(1, "a") + len(2, "y");
    QTest::newRow("nodes between initializers") << QByteArray::fromStdString(
        modelWithGraph(len(5, a) + len(1, node) + len(5, b) + len(2, "g") + len(5, c) + len(5, d)))
                                                << false << 2;
    QTest::newRow("graph given twice") << QByteArray::fromStdString(
        num(1, 8) + len(7, len(5, a) + len(5, b)) + len(7, len(5, d) + len(5, c)))
                                       << false << 2;
    QTest::newRow("padded length prefix")
        << QByteArray::fromStdString(modelWithGraph(len(5, a) + paddedLen(5, b) + len(5, c)))
        << false << 2;
    QTest::newRow("one initializer: none left out")
        << QByteArray::fromStdString(modelWithGraph(len(5, a) + len(1, node))) << false << 0;
    QTest::newRow("only a subgraph's") << QByteArray::fromStdString(modelWithGraph(len(5, a)
        + len(1, node + len(5, len(1, "then") + num(20, 5) + len(6, len(5, b) + len(5, c))))))
                                       << false << 0;
}

void TestWireScan::leftOutInitializersGoBack()
{
    QFETCH(QByteArray, bytes);
    QFETCH(bool, protobufWrote);
    QFETCH(int, leftOut);
    onnx::ModelProto oracle;
    QVERIFY(oracle.ParseFromArray(bytes.constData(), int(bytes.size())));
    size_t count = 0;
    const auto back = leftOutAndBack(bytes.toStdString(), &count);
    QVERIFY(back);
    QCOMPARE(int(count), leftOut);
    onnx::ModelProto parsed;
    QVERIFY(parsed.ParseFromString(*back));
    QCOMPARE(canonical(parsed), canonical(oracle));
    if (protobufWrote)
        QVERIFY(*back == bytes.toStdString());
}

void TestWireScan::testdataLeftOutGoBack()
{
    if (!QFileInfo(kDataDir).isDir())
        QSKIP("libonnx-testdata is not installed");
    QDirIterator it(kDataDir, {"*.onnx"}, QDir::Files, QDirIterator::Subdirectories);
    int models = 0, failures = 0;
    size_t leftOut = 0;
    while (it.hasNext()) {
        const QString path = it.next();
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const std::string bytes = file.readAll().toStdString();
        onnx::ModelProto oracle;
        QVERIFY(oracle.ParseFromString(bytes));
        const std::string expected = canonical(oracle);
        size_t count = 0;
        const auto asWritten = leftOutAndBack(bytes);
        const auto fromProtobuf = leftOutAndBack(expected);
        // Nothing stripped: every initializer but the first is left out.
        const auto allLeftOut = leftOutAndBack(expected, &count, ~0ull);
        onnx::ModelProto parsed;
        const bool ok = asWritten && fromProtobuf && allLeftOut && *fromProtobuf == expected
            && *allLeftOut == expected && parsed.ParseFromString(*asWritten)
            && canonical(parsed) == expected;
        if (!ok)
            qWarning("%s: the initializers left out did not come back", qPrintable(path));
        failures += !ok;
        leftOut += count;
        ++models;
    }
    qInfo("%d models, %zu initializers and nodes left out and put back", models, leftOut);
    QVERIFY(models > 1000);
    QVERIFY(leftOut >= 40); // few of these models have initializers
    QCOMPARE(failures, 0);
}

// A save that leaves the inline tensors out of the protos writes what a save of the whole
// protos writes, byte for byte, and the model it leaves behind reads and saves again as one
// loaded from the new file.
void TestWireScan::saveLeavingOutAgrees()
{
    onnx::ModelProto built = emptyModel();
    auto& graph = *built.mutable_graph();
    for (int i = 0; i < 300; ++i) {
        const std::string name = i == 5 ? std::string() : "t" + std::to_string(i);
        if (i == 40)
            *graph.add_initializer() = rawTensor("inFile", 2, {3000}); // stays in the .onnx
        else if (i == 80)
            *graph.add_initializer() = rawTensor("external", 2, {60000});
        else
            *graph.add_initializer()
                = i % 4 == 0 ? typedTensor(name, 1, {3}) : rawTensor(name, 2, {uint8_t(i % 7 + 1)});
    }
    addConstant(graph, "c", rawTensor("attr", 2, {2}));
    QTemporaryDir dir;
    const QString source = dir.filePath("m.onnx");
    QVERIFY(saveModel(built, source));
    for (const char* sub : {"lean", "whole", "lean2", "whole2"})
        QVERIFY(QDir(dir.path()).mkdir(sub));
    auto lean = loadModel(source);
    auto whole = loadModel(source);
    QVERIFY(lean && whole);
    QVERIFY(whole->loadProtos().ok()); // parsed whole before the save: nothing left out
    const auto tensors = readAllTensors(*lean);
    SaveOptions options;
    options.threshold = 50000;
    const auto saveTo = [&](Model& model, const char* sub) {
        return save(model, dir.filePath(QString(sub) + "/m.onnx").toStdString(), options);
    };
    QVERIFY_OK(saveTo(*lean, "lean"));
    QVERIFY_OK(saveTo(*whole, "whole"));
    QVERIFY(lean->leftOut().size() > 250); // the tiny ones, not the first, not those stored apart
    QVERIFY(whole->leftOut().empty());
    QCOMPARE(fileContents(dir.filePath("lean/m.onnx")), fileContents(dir.filePath("whole/m.onnx")));
    QCOMPARE(fileContents(dir.filePath("lean/m.onnx.data")),
        fileContents(dir.filePath("whole/m.onnx.data")));
    auto reloaded = loadModel(dir.filePath("lean/m.onnx"));
    QVERIFY(reloaded);
    QCOMPARE(readAllTensors(*lean), tensors);
    QCOMPARE(readAllTensors(*reloaded), tensors);
    QCOMPARE(QString::fromStdString(describe(*lean)).replace("/lean/", "/"),
        QString::fromStdString(describe(*reloaded)).replace("/lean/", "/"));

    // Asked for its protos, a model saved that way parses the ones left out in, each at its
    // place.
    QVERIFY(QDir(dir.path()).mkdir("again"));
    auto again = loadModel(source);
    QVERIFY(again);
    QVERIFY_OK(saveTo(*again, "again"));
    QVERIFY(!again->leftOut().empty());
    QCOMPARE(canonical(again->proto()), canonical(reloaded->proto()));
    QVERIFY(again->leftOut().empty());
    QCOMPARE(readAllTensors(*again), tensors);

    // Saved again with every tensor external: the ones left out are parsed in for it.
    options.threshold = 1;
    QVERIFY_OK(saveTo(*lean, "lean2"));
    QVERIFY_OK(saveTo(*whole, "whole2"));
    QVERIFY(lean->leftOut().empty());
    QCOMPARE(
        fileContents(dir.filePath("lean2/m.onnx")), fileContents(dir.filePath("whole2/m.onnx")));
    QCOMPARE(fileContents(dir.filePath("lean2/m.onnx.data")),
        fileContents(dir.filePath("whole2/m.onnx.data")));
    QCOMPARE(readAllTensors(*lean), tensors);
    auto reloaded2 = loadModel(dir.filePath("lean2/m.onnx"));
    QVERIFY(reloaded2);
    QCOMPARE(readAllTensors(*reloaded2), tensors);
}

// An initializer whose TensorProto protobuf cannot read (a segment of one truncated varint:
// the index never reads segments) is refused whether or not the save leaves it out of the
// protos, and nothing is written.
void TestWireScan::leftOutTensorProtobufRefuses()
{
    const std::string broken = uint8Tensor("b", "22") + len(3, "\xff");
    const std::string model = modelWithGraph(
        len(5, uint8Tensor("a", "1")) + len(5, broken) + len(5, uint8Tensor("c", "3")));
    onnx::ModelProto oracle;
    QVERIFY(!oracle.ParseFromString(model));
    QTemporaryDir dir;
    QVERIFY(writeFile(dir.filePath("m.onnx"), model));
    auto lean = loadModel(dir.filePath("m.onnx"));
    auto whole = loadModel(dir.filePath("m.onnx"));
    QVERIFY(lean && whole);
    QVERIFY(!whole->loadProtos().ok());
    auto saved = save(*lean, dir.filePath("out.onnx").toStdString(), SaveOptions{});
    QVERIFY_FAILS_WITH(saved, "not a valid ONNX model");
    QVERIFY(!QFileInfo::exists(dir.filePath("out.onnx")));
    QVERIFY(saveTempsIn(dir.path()).isEmpty());
    QVERIFY(!lean->protosLoaded());
}

// The limit counts the spliced payloads, which the proto does not hold.
void TestWireScan::writerRefusesPast2GiB()
{
    onnx::ModelProto model = emptyModel();
    onnx::TensorProto& t = *model.mutable_graph()->add_initializer();
    t = rawTensor("huge", 2, {1});
    t.set_raw_data(std::string());
    QTemporaryDir dir;
    const std::string path = dir.filePath("out.onnx").toStdString();
    auto fd = UniqueFd::create(path, true);
    QVERIFY(fd.ok());
    const SplicedPayload huge{&t, (uint64_t(1) << 31)};
    bool copied = false;
    auto written
        = writeModel(model, fd->get(), path, std::span(&huge, 1), [&](size_t, int, uint64_t) {
              copied = true;
              return Status{};
          });
    QVERIFY(!written.ok());
    QVERIFY2(contains(written.error().message, "2 GiB"), written.error().message.c_str());
    QVERIFY(!copied);
    QCOMPARE(QFileInfo(QString::fromStdString(path)).size(), 0);
}

// Fuzz finding wire-scan-long-tag: protobuf reads a tag varint of up to 5 bytes and keeps its
// low 32 bits; the scanner refused such a file, so a model python3-onnx reads did not open.
void TestWireScan::fuzzWireScanLongTag()
{
    // Field 7 (graph), wire type 2, written with 35 bits (bits past 32 set), then a graph.
    const std::string graph = len(5, uint8Tensor("w", std::string(2000, 'x')));
    const std::string longTag = std::string("\xba\x80\x80\x80\x70", 5);
    const std::string model = num(1, 8) + longTag + varint(graph.size()) + graph;
    onnx::ModelProto oracle;
    QVERIFY(oracle.ParseFromString(model)); // protobuf accepts it
    QCOMPARE(oracle.graph().initializer_size(), 1);
    QCOMPARE(checkSkeleton(model, 1, "long tag"), 1);
    QVERIFY(checkWriter(model, "long tag"));
    // Six bytes are too many for protobuf, and for the scanner.
    const std::string tooLong
        = num(1, 8) + std::string("\xba\x80\x80\x80\x80\x00", 6) + varint(graph.size()) + graph;
    QVERIFY(!oracle.ParseFromString(tooLong));
    auto scan = scanModel(spanOf(tooLong), "too long", 1);
    QVERIFY(!scan.ok());
    QVERIFY2(contains(scan.error().message, "longer than 5 bytes"), scan.error().message.c_str());
}

// Fuzz finding wire-scan-padded-length: protobuf reads a length prefix written with more bytes
// than it needs (0x85 0x00 is 5; writers that reserve a fixed-width prefix and fill it in later
// produce such lengths). The scanner counted the old prefix as its minimal size, so every
// enclosing length in the skeleton, and in a model the writer spliced, was short by the padding:
// Model::load refused the model and a save would have written one nothing can parse.
void TestWireScan::fuzzWireScanPaddedLength()
{
    // `value`'s length prefix padded to `width` bytes.
    const auto padded = [](uint32_t field, const std::string& value, int width) {
        std::string prefix;
        uint64_t v = value.size();
        for (int i = 0; i < width - 1; ++i) {
            prefix.push_back(char((v & 0x7f) | 0x80));
            v >>= 7;
        }
        prefix.push_back(char(v));
        return tag(field, 2) + prefix + value;
    };
    const std::string raw(2000, 'x');
    // raw_data, the initializer and the graph each with a padded prefix, and a second
    // initializer with minimal ones between padded siblings.
    const std::string tensor = num(1, raw.size()) + num(2, 2) + len(8, "w") + padded(9, raw, 4);
    const std::string graph = padded(5, tensor, 5) + len(5, uint8Tensor("v", std::string(900, 'v')))
        + padded(5, num(1, 3) + num(2, 2) + len(8, "s") + padded(9, "abc", 3), 2);
    const std::string model = num(1, 8) + len(8, len(1, "") + num(2, 17)) + padded(7, graph, 5);
    onnx::ModelProto oracle;
    QVERIFY(oracle.ParseFromString(model)); // protobuf accepts it
    QCOMPARE(oracle.graph().initializer_size(), 3);
    QCOMPARE(oracle.graph().initializer(0).raw_data(), raw);
    QCOMPARE(checkSkeleton(model, 1, "padded lengths"), 3);
    QCOMPARE(checkSkeleton(model, 1000, "padded lengths, one stripped"), 1);
    QVERIFY(checkWriter(model, "padded lengths"));

    QTemporaryDir dir;
    const QString path = dir.filePath("padded.onnx");
    QVERIFY(writeFile(path, model));
    checkLoad(path);
}

// Fuzz review finding model-load-fifo-hang: opening a FIFO named like a model blocked forever
// waiting for a writer (without the fix this test never returns and CTest's timeout fails it).
void TestWireScan::fuzzModelLoadFifoHang()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("pipe.onnx");
    QCOMPARE(::mkfifo(path.toLocal8Bit().constData(), 0600), 0);
    auto model = Model::load(path.toStdString());
    QVERIFY(!model.ok());
    QVERIFY2(contains(model.error().message, path.toStdString())
            && contains(model.error().message, "not a regular file"),
        model.error().message.c_str());
    // An empty file says so.
    QVERIFY(writeFile(dir.filePath("empty.onnx"), ""));
    auto empty = Model::load(dir.filePath("empty.onnx").toStdString());
    QVERIFY(!empty.ok());
    QVERIFY2(contains(empty.error().message, "empty file"), empty.error().message.c_str());
}

QTEST_GUILESS_MAIN(TestWireScan)
#include "tst_wire_scan.moc"
