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
    void structureReadInSequenceIsAFewRequests();
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
    // Each payload up to w3 follows a payload left out: none is fetched. The last two follow
    // the long name, which spans three blocks read in sequence: the read-ahead after it may
    // take them (an unbroken run of structure reads further ahead each time).
    for (size_t i = 0; i < 6; ++i)
        QVERIFY2(!image->covers(payloads[i]), std::to_string(i).c_str());
}

void TestStructureImage::structureReadInSequenceIsAFewRequests()
{
    // An external-data model's .onnx is all structure: 20,000 external initializers in about
    // 2.4 MB, ten blocks the walk reads one after the other.
    onnx::ModelProto model = fixtures::emptyModel();
    onnx::GraphProto& graph = *model.mutable_graph();
    for (int i = 0; i < 20000; ++i) {
        onnx::TensorProto tensor = fixtures::rawTensor(
            "model.layers." + std::to_string(i) + ".weight", onnx::TensorProto::FLOAT, {1});
        tensor.clear_raw_data();
        fixtures::setExternal(tensor, "model.onnx_data", std::to_string(i * 4), "4");
        *graph.add_initializer() = tensor;
    }
    FakeSource source;
    model.SerializeToString(&source.bytes);
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
