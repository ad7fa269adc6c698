// StructureImage (issue 38): a model read from a source that is not a local file, without its
// weights. The index of the image must be the index of the file, while no block that lies
// wholly in an inline payload is fetched; bytes that are not a well-formed model are fetched
// as they are, so the index reports the same fault in both.
#include "core/model/model.h"
#include "core/model/structure_image.h"
#include "core/model/tensor_index.h"

#include "tests/support/model_builder.h"
#include "tests/support/tensor_builder.h"

#include <QTest>

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

} // namespace

class TestStructureImage : public QObject {
    Q_OBJECT
private slots:
    void theImageIndexesAsTheFile();
    void blocksWhollyInAPayloadAreNotFetched();
    void aTruncatedModelFailsAsTheFileDoes_data();
    void aTruncatedModelFailsAsTheFileDoes();
    void bytesThatAreNotAModelAreFetchedWhole();
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
    // w0..w3 (1 MiB each), the long-named one, the Constant's value, the subgraph's
    // initializer, the sparse indices.
    QCOMPARE(payloads.size(), size_t(8));
    for (const FileRange& read : source.reads) {
        QCOMPARE(read.offset % kBlock, uint64_t(0)); // aligned blocks, each once
        for (const FileRange& p : payloads)
            QVERIFY2(!(read.offset >= p.offset && read.offset + read.length <= p.offset + p.length),
                ("block at " + std::to_string(read.offset) + " lies in a payload").c_str());
    }
    std::vector<uint64_t> offsets;
    for (const FileRange& read : source.reads)
        offsets.push_back(read.offset);
    std::sort(offsets.begin(), offsets.end());
    QVERIFY(std::adjacent_find(offsets.begin(), offsets.end()) == offsets.end());
    for (const FileRange& p : payloads)
        QVERIFY(!image->covers(p));
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
    FakeSource source{.bytes = modelWithInlineWeights(), .reads = {}};
    const size_t keep = fraction < 0 ? source.bytes.size() - 1
                                     : static_cast<size_t>(source.bytes.size() * fraction);
    source.bytes.resize(keep);
    auto image = StructureImage::fetch(source.bytes.size(), source.read(), "model.onnx");
    QVERIFY(image);
    auto fromImage = indexOf(image->bytes());
    auto fromFile = indexOf(spanOf(source.bytes));
    QCOMPARE(fromImage.ok(), fromFile.ok());
    if (fromFile)
        compareIndexes(*fromImage, *fromFile);
    else
        QCOMPARE(fromImage.error().message, fromFile.error().message);
}

void TestStructureImage::bytesThatAreNotAModelAreFetchedWhole()
{
    FakeSource source;
    std::mt19937 random(3);
    source.bytes.resize(3 * kBlock + 100);
    for (char& c : source.bytes)
        c = static_cast<char>(random());
    auto image = StructureImage::fetch(source.bytes.size(), source.read(), "model.onnx");
    QVERIFY(image);
    QVERIFY(image->covers({0, source.bytes.size()}));
    QVERIFY(std::memcmp(image->bytes().data(), source.bytes.data(), source.bytes.size()) == 0);
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
