// StructureImage (issue 38): a model read from a source that is not a local file, without its
// weights. The index of the image must be the index of the file, while no block that lies
// wholly in an inline payload is fetched. A file that is no model, or a model malformed
// somewhere, fails as the file on disk does (the same kind and fault), having fetched no more
// than the bytes up to the fault (issue 48: a 256 MiB file of random bytes was fetched whole).
#include "core/model/model.h"
#include "core/model/structure_image.h"
#include "core/model/tensor_index.h"

#include "tests/support/model_builder.h"
#include "tests/support/tensor_builder.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <random>

using namespace repack;

namespace {

constexpr uint64_t kBlock = StructureImage::kBlockBytes;

// A file in memory that records the ranges read from it.
struct FakeSource {
    std::string bytes;
    std::vector<FileRange> reads;
    bool failing = false;
    StructureImage::Read read()
    {
        return [this](uint64_t offset, uint64_t length) -> Result<TensorBytes> {
            reads.push_back({offset, length});
            if (failing)
                return Error::io("https://example.test/model.onnx: connection reset");
            if (offset + length > bytes.size())
                return Error::internal("read past the end");
            const auto* begin = reinterpret_cast<const std::byte*>(bytes.data()) + offset;
            return TensorBytes::own({begin, begin + length});
        };
    }
};

Result<TensorIndex> indexOf(std::span<const std::byte> bytes)
{
    const RawPayloadRule inFile
        = [](size_t, FileRange payload) { return std::optional<FileRange>(payload); };
    return indexTensors(bytes, "model.onnx", inFile);
}

std::span<const std::byte> spanOf(const std::string& s)
{
    return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// A tensor's index entry as text: everything the index says of it.
std::string describe(const TensorInfo& t)
{
    std::string text = t.scope + "/" + t.name + " kind=" + std::to_string(int(t.kind))
        + " storage=" + std::to_string(int(t.storage)) + " dtype=" + std::to_string(t.dataType)
        + " bytes=" + std::to_string(t.byteSize()) + " dims=";
    for (int64_t d : t.shape)
        text += std::to_string(d) + ",";
    if (t.inlineRange)
        text += " inline=" + std::to_string(t.inlineRange->offset) + "+"
            + std::to_string(t.inlineRange->length);
    if (t.external.present())
        text += " external=" + t.external->location() + "@" + std::to_string(t.external->offset);
    return text + " graphBuild=" + *t.readAtGraphBuild;
}

void compareIndexes(const TensorIndex& fromImage, const TensorIndex& fromFile)
{
    QCOMPARE(fromImage.tensors.size(), fromFile.tensors.size());
    for (size_t i = 0; i < fromFile.tensors.size(); ++i)
        QCOMPARE(describe(fromImage.tensors[i]), describe(fromFile.tensors[i]));
    QCOMPARE(fromImage.problems.size(), fromFile.problems.size());
    for (size_t i = 0; i < fromFile.problems.size(); ++i)
        QCOMPARE(fromImage.problems[i].message, fromFile.problems[i].message);
    QCOMPARE(fromImage.header.producerName, fromFile.header.producerName);
    QCOMPARE(fromImage.functionCount, fromFile.functionCount);
}

uint64_t fetchedBy(const FakeSource& source)
{
    uint64_t total = 0;
    for (const FileRange& read : source.reads)
        total += read.length;
    return total;
}

std::string randomBytes(size_t size, unsigned seed)
{
    std::mt19937 random(seed);
    std::string bytes(size, '\0');
    for (char& c : bytes)
        c = static_cast<char>(random());
    return bytes;
}

std::string varint(uint64_t value)
{
    std::string out;
    for (; value >= 0x80; value >>= 7)
        out += static_cast<char>((value & 0x7f) | 0x80);
    return out + static_cast<char>(value);
}

// A length-delimited field `number` holding `value`.
std::string lengthField(uint32_t number, const std::string& value)
{
    return varint(number << 3 | 2) + varint(value.size()) + value;
}

// Weights of 1 MiB and more inline in the main graph, a Constant node, a subgraph and a
// function; small tensors, typed ones, an external one, one with a name of two blocks and a
// sparse initializer among them.
std::string modelWithInlineWeights()
{
    onnx::ModelProto model = fixtures::emptyModel();
    model.set_producer_name("structure-image-test");
    onnx::GraphProto& graph = *model.mutable_graph();
    for (int i = 0; i < 4; ++i)
        *graph.add_initializer() = fixtures::rawTensor(
            "w" + std::to_string(i), onnx::TensorProto::FLOAT, {256, 1024 + i});
    *graph.add_initializer() = fixtures::rawTensor("bias", onnx::TensorProto::FLOAT, {16});
    // Strings longer than a block are fetched whole, payloads or not.
    *graph.add_initializer() = fixtures::rawTensor(
        std::string(2 * kBlock + 9, 'n'), onnx::TensorProto::FLOAT, {2 * kBlock / 4});
    *graph.add_initializer() = fixtures::typedTensor("typed", onnx::TensorProto::INT64, {4000});
    onnx::TensorProto far = fixtures::rawTensor("far", onnx::TensorProto::FLOAT, {8});
    far.clear_raw_data();
    fixtures::setExternal(far, "weights.bin", "4096", "32");
    *graph.add_initializer() = far;
    *graph.add_sparse_initializer()
        = fixtures::sparseTensor("sparse", "sparse.indices", {100000}, 70000);
    fixtures::addConstant(
        graph, "shape", fixtures::rawTensor("shape_value", onnx::TensorProto::INT64, {2}));
    onnx::NodeProto& reshape = fixtures::addNode(graph, "Reshape", "reshape");
    reshape.add_input("w0");
    reshape.add_input("shape");
    reshape.add_output("y");
    fixtures::addConstant(
        graph, "big_constant", fixtures::rawTensor("c", onnx::TensorProto::FLOAT, {160000}));
    onnx::NodeProto& branch = fixtures::addNode(graph, "If", "branch");
    onnx::GraphProto& then = fixtures::addSubgraph(branch, "then_branch");
    *then.add_initializer() = fixtures::rawTensor("inner", onnx::TensorProto::FLOAT, {180000});
    onnx::FunctionProto& function = fixtures::addFunction(model, "custom", "F");
    fixtures::addNode(*function.mutable_node(), "Constant", "fc");
    std::string bytes;
    model.SerializeToString(&bytes);
    return bytes;
}

// 20,000 external initializers: about 2.4 MB of structure and nothing else.
std::string externalDataModel()
{
    onnx::ModelProto model = fixtures::emptyModel();
    onnx::GraphProto& graph = *model.mutable_graph();
    for (int i = 0; i < 20000; ++i) {
        onnx::TensorProto tensor = fixtures::rawTensor(
            "model.layers." + std::to_string(i) + ".weight", onnx::TensorProto::FLOAT, {1});
        tensor.clear_raw_data();
        fixtures::setExternal(tensor, "model.onnx_data", std::to_string(i * 4), "4");
        *graph.add_initializer() = tensor;
    }
    return model.SerializeAsString();
}

} // namespace

class TestStructureImage : public QObject {
    Q_OBJECT
private slots:
    void theImageIndexesAsTheFile();
    void blocksWhollyInAPayloadAreNotFetched();
    void structureReadInSequenceIsAFewRequests();
    void aTruncatedModelFailsAsTheFileDoes_data();
    void aTruncatedModelFailsAsTheFileDoes();
    void whatIsNoModelFailsBeforeItIsFetched_data();
    void whatIsNoModelFailsBeforeItIsFetched();
    void aFailedReadNamesTheModel();
    void aSmallModelIsOneRead();
};

void TestStructureImage::theImageIndexesAsTheFile()
{
    FakeSource source{.bytes = modelWithInlineWeights(), .reads = {}};
    auto image = StructureImage::fetch(source.bytes.size(), source.read(), "model.onnx");
    QVERIFY(image);
    auto fromImage = indexOf(image->bytes());
    auto fromFile = indexOf(spanOf(source.bytes));
    QVERIFY(fromImage && fromFile);
    QVERIFY(fromFile->tensors.size() >= 10);
    compareIndexes(*fromImage, *fromFile);
    // What was fetched is the file's.
    for (uint64_t offset = 0; offset < source.bytes.size(); offset += kBlock) {
        const uint64_t length = std::min<uint64_t>(kBlock, source.bytes.size() - offset);
        if (image->covers({offset, length}))
            QVERIFY(
                std::memcmp(image->bytes().data() + offset, source.bytes.data() + offset, length)
                == 0);
    }
    QVERIFY2(image->fetchedBytes() < source.bytes.size() / 2,
        (std::to_string(image->fetchedBytes()) + " of " + std::to_string(source.bytes.size()))
            .c_str());
}

void TestStructureImage::blocksWhollyInAPayloadAreNotFetched()
{
    FakeSource source{.bytes = modelWithInlineWeights(), .reads = {}};
    auto image = StructureImage::fetch(source.bytes.size(), source.read(), "model.onnx");
    QVERIFY(image);
    auto index = indexOf(spanOf(source.bytes));
    QVERIFY(index);
    std::vector<FileRange> payloads;
    for (const TensorInfo& t : index->tensors)
        if (t.inlineRange && t.inlineRange->length >= 2 * kBlock)
            payloads.push_back(*t.inlineRange);
    // The Constant's value, the subgraph's initializer, w0..w3 (1 MiB each), the long-named
    // one, the sparse indices, in file order.
    std::sort(payloads.begin(), payloads.end(),
        [](const FileRange& a, const FileRange& b) { return a.offset < b.offset; });
    QCOMPARE(payloads.size(), size_t(8));
    for (const FileRange& read : source.reads) {
        QCOMPARE(read.offset % kBlock, uint64_t(0)); // aligned blocks
        // A request starts where the walk needs bytes: never in a block of a payload.
        for (const FileRange& p : payloads)
            QVERIFY2(!(read.offset >= p.offset && read.offset + kBlock <= p.offset + p.length),
                ("a read starts at " + std::to_string(read.offset) + ", in a payload").c_str());
    }
    std::vector<uint64_t> blocks; // each block once
    for (const FileRange& read : source.reads)
        for (uint64_t at = read.offset; at < read.offset + read.length; at += kBlock)
            blocks.push_back(at);
    std::sort(blocks.begin(), blocks.end());
    QVERIFY(std::adjacent_find(blocks.begin(), blocks.end()) == blocks.end());
    // None is fetched: each follows a payload left out, or the long name, whose bytes are
    // fetched after the walk (so the read-ahead does not run on into the payloads after it).
    for (size_t i = 0; i < payloads.size(); ++i)
        QVERIFY2(!image->covers(payloads[i]), std::to_string(i).c_str());
}

void TestStructureImage::structureReadInSequenceIsAFewRequests()
{
    // An external-data model's .onnx is all structure: ten blocks the walk reads one after the
    // other.
    FakeSource source{.bytes = externalDataModel(), .reads = {}};
    const uint64_t blocks = (source.bytes.size() + kBlock - 1) / kBlock;
    QVERIFY2(blocks >= 8, std::to_string(blocks).c_str());
    auto image = StructureImage::fetch(source.bytes.size(), source.read(), "model.onnx");
    QVERIFY(image);
    // One block, then eight, then the rest: three requests, not one per block.
    QVERIFY2(source.reads.size() <= 3, std::to_string(source.reads.size()).c_str());
    uint64_t fetched = 0;
    for (const FileRange& read : source.reads)
        fetched += read.length;
    QCOMPARE(fetched, uint64_t(source.bytes.size())); // every byte once
    auto fromImage = indexOf(image->bytes());
    auto fromFile = indexOf(spanOf(source.bytes));
    QVERIFY(fromImage && fromFile);
    compareIndexes(*fromImage, *fromFile);
}

void TestStructureImage::aTruncatedModelFailsAsTheFileDoes_data()
{
    QTest::addColumn<double>("fraction");
    QTest::addRow("in the first weight") << 0.1;
    QTest::addRow("in the middle") << 0.5;
    QTest::addRow("near the end") << 0.97;
    QTest::addRow("one byte short") << -1.0;
}

void TestStructureImage::aTruncatedModelFailsAsTheFileDoes()
{
    QFETCH(double, fraction);
    FakeSource whole{.bytes = modelWithInlineWeights(), .reads = {}};
    QVERIFY(StructureImage::fetch(whole.bytes.size(), whole.read(), "model.onnx"));
    FakeSource source{.bytes = whole.bytes, .reads = {}};
    const size_t keep = fraction < 0 ? source.bytes.size() - 1
                                     : static_cast<size_t>(source.bytes.size() * fraction);
    source.bytes.resize(keep);
    auto fromFile = indexOf(spanOf(source.bytes));
    QVERIFY(!fromFile);
    // The fault the index finds in the file, found while fetching: nothing past it is fetched,
    // and never more than the whole model's structure.
    auto image = StructureImage::fetch(source.bytes.size(), source.read(), "model.onnx");
    QVERIFY2(fetchedBy(source) <= fetchedBy(whole),
        (std::to_string(fetchedBy(source)) + " of " + std::to_string(fetchedBy(whole))).c_str());
    QVERIFY(!image);
    QCOMPARE(image.error().kind, ErrorKind::Corrupt);
    QCOMPARE(image.error().message, fromFile.error().message);
}

void TestStructureImage::whatIsNoModelFailsBeforeItIsFetched_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("kind"); // ErrorKind
    QTest::addColumn<QString>("part"); // of the message, remote and local alike
    QTest::addColumn<qulonglong>("mostFetched"); // bytes

    const auto row = [](const char* name, const std::string& bytes, ErrorKind kind,
                         const QString& part, uint64_t mostFetched) {
        QTest::newRow(name) << QByteArray::fromStdString(bytes) << int(kind) << part
                            << qulonglong(mostFetched);
    };
    const QString notAModel = "model.onnx: not an ONNX model (";
    const QString malformed = "model.onnx: not a valid ONNX model (malformed or truncated "
                              "protobuf): ";
    row("random bytes", randomBytes(8 << 20, 1), ErrorKind::Format,
        notAModel
            + "the tag at byte 0 is field 4 of wire type 5: no field of a ModelProto; "
              "it begins 25 ",
        kBlock);
    row("zeros", std::string(4 << 20, '\0'), ErrorKind::Format,
        notAModel + "field number 0 at byte 0; it begins 00 00 00 00 00 00 00 00)", kBlock);
    std::string page = "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>";
    while (page.size() < (3 << 20))
        page += "<p>The page you asked for is not here.</p>\n";
    row("an HTML page", page, ErrorKind::Format,
        notAModel
            + "the tag at byte 0 is field 7 of wire type 4: no field of a ModelProto; "
              "it begins \"<!DOCTYPE html>\\n<html><head><title>404 N...\")",
        kBlock);
    row("gzip", std::string("\x1f\x8b\x08\x00", 4) + randomBytes(2 << 20, 1), ErrorKind::Format,
        notAModel + "invalid wire type 7 at byte 0; it begins 1f 8b 08 00 ", kBlock);
    const std::string header = R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
    row("safetensors", std::string("\x3a\0\0\0\0\0\0\0", 8) + header + std::string(16, '\1'),
        ErrorKind::Format, notAModel + "a safetensors header at byte 0; it begins 3a 00 ", kBlock);
    // A byte that begins a graph field, with a length no file has.
    row("a graph of a length past the end",
        "\x3a" + varint(uint64_t(1) << 40) + randomBytes(2 << 20, 2), ErrorKind::Format,
        notAModel
            + "its first field, graph, claims 1099511627776 bytes at byte 1, past the end "
              "of the file at byte 2097159; it begins 3a ",
        kBlock);
    // A well-formed top level without a graph: its fields' bytes are never fetched.
    const std::string ir = "\x08\x08";
    row("a doc_string to the end", ir + lengthField(6, std::string(6 << 20, 'd')),
        ErrorKind::Format, notAModel + "no graph and no functions", kBlock);
    std::string fields = ir;
    while (fields.size() < (12 << 20))
        fields += lengthField(6, std::string(300000, 'd'));
    row("header fields over many blocks", fields, ErrorKind::Format,
        notAModel + "no graph and no functions", 4 << 20);
    // A first field that may begin a model, and no model after it: the fault where it is.
    const std::string noise = randomBytes(8 << 20, 3);
    row("a graph of random bytes", "\x3a" + varint(noise.size()) + noise, ErrorKind::Corrupt,
        malformed, 2 * kBlock);
    // A model with a fault inside its graph after a field of 2.4 MB: not fetched.
    onnx::GraphProto graph;
    *graph.add_initializer() = fixtures::typedTensor("typed", onnx::TensorProto::FLOAT, {600000});
    std::string graphBytes = graph.SerializeAsString() + "\x0f";
    const std::string faultInGraph = ir + lengthField(7, graphBytes);
    row("a fault in the graph after a large field", faultInGraph, ErrorKind::Corrupt,
        malformed + "invalid wire type 7 at byte " + QString::number(faultInGraph.size() - 1),
        2 * kBlock);
    // A model followed by an error page: no byte of the page past its first block, whether
    // the model's structure is read in one unbroken run (read ahead) or between payloads.
    const std::pair<const char*, std::string> models[]
        = {{"an inline model followed by an HTML page", modelWithInlineWeights()},
            {"an external-data model followed by an HTML page", externalDataModel()}};
    for (const auto& [name, bytes] : models) {
        FakeSource model{.bytes = bytes, .reads = {}};
        QVERIFY(StructureImage::fetch(model.bytes.size(), model.read(), "model.onnx"));
        row(name, model.bytes + page, ErrorKind::Corrupt,
            malformed + "end-group tag without a group at byte "
                + QString::number(model.bytes.size()),
            fetchedBy(model) + kBlock);
    }
}

// Each fails as the same file on disk does, at its first bytes or where the fault is, having
// fetched at most that: a hostile or mistaken server cannot make the tool download a file to
// find out it is no model.
void TestStructureImage::whatIsNoModelFailsBeforeItIsFetched()
{
    QFETCH(QByteArray, bytes);
    QFETCH(int, kind);
    QFETCH(QString, part);
    QFETCH(qulonglong, mostFetched);
    FakeSource source{.bytes = bytes.toStdString(), .reads = {}};
    auto image = StructureImage::fetch(source.bytes.size(), source.read(), "model.onnx");
    QVERIFY2(fetchedBy(source) <= mostFetched,
        (std::to_string(fetchedBy(source)) + " bytes fetched").c_str());
    QVERIFY(!image);
    const QString message = QString::fromStdString(image.error().message);
    QVERIFY2(message.startsWith(part), qPrintable(message));
    QCOMPARE(int(image.error().kind), kind);

    QTemporaryDir dir;
    const QString path = dir.filePath("model.onnx");
    std::ofstream(path.toStdString(), std::ios::binary) << source.bytes;
    auto local = Model::load(path.toStdString());
    QVERIFY(!local);
    QCOMPARE(int(local.error().kind), kind);
    QString words = part;
    words.replace(0, QString("model.onnx").size(), path);
    QVERIFY2(QString::fromStdString(local.error().message).startsWith(words),
        local.error().message.c_str());
}

void TestStructureImage::aFailedReadNamesTheModel()
{
    FakeSource source{.bytes = modelWithInlineWeights(), .reads = {}};
    source.failing = true;
    auto image = StructureImage::fetch(
        source.bytes.size(), source.read(), "https://example.test/model.onnx");
    QVERIFY(!image);
    QVERIFY(image.error().is(ErrorKind::Io));
    QVERIFY2(image.error().message.starts_with("https://example.test/model.onnx: "),
        image.error().message.c_str());
    QCOMPARE(source.reads.size(), size_t(1));
}

void TestStructureImage::aSmallModelIsOneRead()
{
    onnx::ModelProto model = fixtures::emptyModel();
    *model.mutable_graph()->add_initializer()
        = fixtures::rawTensor("w", onnx::TensorProto::FLOAT, {64});
    FakeSource source;
    model.SerializeToString(&source.bytes);
    auto image = StructureImage::fetch(source.bytes.size(), source.read(), "model.onnx");
    QVERIFY(image);
    QCOMPARE(source.reads.size(), size_t(1));
    QCOMPARE(source.reads.front().length, uint64_t(source.bytes.size()));
    auto fromImage = indexOf(image->bytes());
    auto fromFile = indexOf(spanOf(source.bytes));
    QVERIFY(fromImage && fromFile);
    compareIndexes(*fromImage, *fromFile);
}

QTEST_APPLESS_MAIN(TestStructureImage)
#include "tst_structure_image.moc"
