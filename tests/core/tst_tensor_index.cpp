// The tensor index finds every tensor wherever it sits (main graph, subgraphs at depth, node
// attributes, functions, sparse initializers) with the right name, scope, kind, dtype, shape,
// sizes and storage; loading maps no data, and one data file is mapped once however many
// tensors live in it. Expected values come from how the fixture below is built.
#include "core/model/data_file.h"
#include "core/model/model.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/model_builder.h"
#include "tests/support/result_checks.h"
#include "tests/support/tensor_builder.h"

#include <QTemporaryDir>
#include <QTest>

#include <map>

using namespace repack;
using namespace fixtures;

namespace {

std::string bytesOf(const TensorBytes& t)
{
    auto b = t.bytes();
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace

class TestTensorIndex : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void everyPlace_data();
    void everyPlace();
    void nothingElseIsFound();
    void loadingMapsNothing();
    void oneMappingPerFile();
    void entriesShareScopesAndHoldReferences();
    void hugeShapes_data();
    void hugeShapes();

private:
    QTemporaryDir m_dir;
    std::unique_ptr<Model> m_model;
    // Bytes each raw or external tensor was given when built, by "scope/name".
    std::map<std::string, std::string> m_built;
    void remember(const std::string& scope, const onnx::TensorProto& t, const std::string& name)
    {
        m_built[scope + "/" + name] = t.raw_data();
    }
};

void TestTensorIndex::initTestCase()
{
    QVERIFY(m_dir.isValid());
    onnx::ModelProto model = emptyModel();
    onnx::GraphProto& g = *model.mutable_graph();
    DataFileBuilder data("weights.bin");

    *g.add_initializer() = rawTensor("w_raw", 1, {2, 3});
    *g.add_initializer() = typedTensor("w_typed", 7, {4});
    auto ext = rawTensor("w_ext", 10, {3, 5});
    remember("graph", ext, "w_ext");
    data.externalize(ext, 0);
    *g.add_initializer() = ext;
    auto ext2 = rawTensor("w_ext2", 16, {7});
    remember("graph", ext2, "w_ext2");
    data.append(ext2, 64);
    *g.add_initializer() = ext2;
    *g.add_initializer() = rawTensor("w_int4", 22, {3, 3});
    *g.add_initializer() = typedTensor("w_str", 8, {3});
    *g.add_initializer() = typedTensor("w_c128", 15, {2});
    *g.add_sparse_initializer() = sparseTensor("sp_vals", "sp_idx", {10}, 3);
    *g.add_sparse_initializer() = sparseTensor("sp2_vals", "", {4, 4}, 2);

    // node #0: Constant with an unnamed value tensor
    addConstant(g, "const_a", rawTensor("", 17, {4}));
    // node #1: an unnamed custom op with a TENSORS attribute
    addTensorsAttribute(
        addNode(g, "Custom", ""), "weights", {rawTensor("", 2, {5}), typedTensor("tw1", 21, {3})});
    // node #2: If whose then-branch holds a Loop whose body holds more tensors
    onnx::NodeProto& ifNode = addNode(g, "If", "if0");
    onnx::GraphProto& thenBranch = addSubgraph(ifNode, "then_branch");
    auto thenW = rawTensor("then_w", 1, {2});
    remember("graph/if0/then_branch", thenW, "then_w");
    data.append(thenW, 64);
    *thenBranch.add_initializer() = thenW;
    onnx::GraphProto& body = addSubgraph(addNode(thenBranch, "Loop", ""), "body");
    *body.add_initializer() = typedTensor("deep_w", 11, {3});
    addNode(body, "Identity", "");
    addConstant(body, "", rawTensor("deep_c", 6, {2}));
    onnx::GraphProto& elseBranch = addSubgraph(ifNode, "else_branch");
    addConstant(elseBranch, "else_c", rawTensor("", 3, {1, 1}));
    // node #3: a GRAPHS attribute; only the second graph holds a tensor
    auto& branches = addGraphsAttribute(addNode(g, "Custom", "multi"), "branches", 2);
    *branches.mutable_graphs(1)->add_initializer() = rawTensor("g1_w", 4, {2});
    // node #4: a Constant holding a sparse tensor with unnamed values and indices
    {
        onnx::NodeProto& node = addNode(g, "Constant", "sp_const");
        auto* attr = node.add_attribute();
        attr->set_name("sparse_value");
        attr->set_type(onnx::AttributeProto::SPARSE_TENSOR);
        *attr->mutable_sparse_tensor() = sparseTensor("", "", {6}, 2);
    }
    // node #5: an attribute tensor stored externally
    auto cext = rawTensor("cext", 1, {8});
    remember("graph", cext, "cext");
    data.append(cext, 64);
    addConstant(g, "const_ext", cext);

    onnx::FunctionProto& fn = addFunction(model, "custom.fn", "MyFn");
    onnx::NodeProto& fnConst = addNode(*fn.mutable_node(), "Constant", "");
    auto* attr = fnConst.add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    *attr->mutable_t() = typedTensor("", 9, {3});

    QVERIFY(data.save(m_dir.path()));
    QVERIFY(saveModel(model, m_dir.filePath("model.onnx")));
    auto loaded = Model::load(m_dir.filePath("model.onnx").toStdString());
    QVERIFY_OK(loaded);
    m_model = std::move(*loaded);
    for (const auto& p : m_model->problems())
        qWarning("unexpected problem: %s", p.message.c_str());
    QVERIFY(m_model->problems().empty());
}

void TestTensorIndex::everyPlace_data()
{
    QTest::addColumn<int>("position");
    QTest::addColumn<QString>("scope");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("dtype");
    QTest::addColumn<QList<qint64>>("shape");
    QTest::addColumn<quint64>("elements");
    QTest::addColumn<quint64>("bytes");
    QTest::addColumn<QString>("storage");
    QTest::addColumn<quint64>("offset"); // external only

    using S = QList<qint64>;
    const QString g = "graph";
    auto row = [](const char* label) -> QTestData& { return QTest::newRow(label); };
    // bytes = elements x width from the ONNX spec (float 4, float16 2, int4 packed, ...)
    row("raw initializer") << 0 << g << "w_raw"
                           << "initializer" << 1 << S{2, 3} << 6ull << 24ull << "raw" << 0ull;
    row("typed int64") << 1 << g << "w_typed"
                       << "initializer" << 7 << S{4} << 4ull << 32ull << "typed" << 0ull;
    row("external float16") << 2 << g << "w_ext"
                            << "initializer" << 10 << S{3, 5} << 15ull << 30ull << "external"
                            << 0ull;
    row("external bfloat16 aligned")
        << 3 << g << "w_ext2"
        << "initializer" << 16 << S{7} << 7ull << 14ull << "external" << 64ull;
    row("int4 odd count") << 4 << g << "w_int4"
                          << "initializer" << 22 << S{3, 3} << 9ull << 5ull << "raw" << 0ull;
    row("string: sum of lengths") << 5 << g << "w_str"
                                  << "initializer" << 8 << S{3} << 3ull << 6ull << "typed" << 0ull;
    row("typed complex128") << 6 << g << "w_c128"
                            << "initializer" << 15 << S{2} << 2ull << 32ull << "typed" << 0ull;
    row("sparse values") << 7 << g << "sp_vals"
                         << "sparse" << 1 << S{3} << 3ull << 12ull << "raw" << 0ull;
    row("sparse indices") << 8 << g << "sp_idx"
                          << "sparse" << 7 << S{3} << 3ull << 24ull << "raw" << 0ull;
    row("sparse values 2") << 9 << g << "sp2_vals"
                           << "sparse" << 1 << S{2} << 2ull << 8ull << "raw" << 0ull;
    row("sparse unnamed indices") << 10 << g << "sp2_vals.indices"
                                  << "sparse" << 7 << S{2} << 2ull << 16ull << "raw" << 0ull;
    row("Constant value") << 11 << g << "const_a.value"
                          << "attribute" << 17 << S{4} << 4ull << 4ull << "raw" << 0ull;
    row("TENSORS unnamed node") << 12 << g << "#1.weights[0]"
                                << "attribute" << 2 << S{5} << 5ull << 5ull << "raw" << 0ull;
    row("TENSORS named") << 13 << g << "tw1"
                         << "attribute" << 21 << S{3} << 3ull << 2ull << "typed" << 0ull;
    row("If branch external") << 14 << "graph/if0/then_branch"
                              << "then_w"
                              << "initializer" << 1 << S{2} << 2ull << 8ull << "external" << 128ull;
    row("Loop body two deep") << 15 << "graph/if0/then_branch/#0/body"
                              << "deep_w"
                              << "initializer" << 11 << S{3} << 3ull << 24ull << "typed" << 0ull;
    row("Constant two deep") << 16 << "graph/if0/then_branch/#0/body"
                             << "deep_c"
                             << "attribute" << 6 << S{2} << 2ull << 8ull << "raw" << 0ull;
    row("else branch Constant") << 17 << "graph/if0/else_branch"
                                << "else_c.value"
                                << "attribute" << 3 << S{1, 1} << 1ull << 1ull << "raw" << 0ull;
    row("GRAPHS attribute") << 18 << "graph/multi/branches[1]"
                            << "g1_w"
                            << "initializer" << 4 << S{2} << 2ull << 4ull << "raw" << 0ull;
    row("sparse attribute values") << 19 << g << "sp_const.sparse_value"
                                   << "sparse" << 1 << S{2} << 2ull << 8ull << "raw" << 0ull;
    row("sparse attribute indices") << 20 << g << "sp_const.sparse_value.indices"
                                    << "sparse" << 7 << S{2} << 2ull << 16ull << "raw" << 0ull;
    row("external attribute") << 21 << g << "cext"
                              << "attribute" << 1 << S{8} << 8ull << 32ull << "external" << 192ull;
    row("function Constant") << 22 << "function:custom.fn:MyFn"
                             << "#0.value"
                             << "attribute" << 9 << S{3} << 3ull << 3ull << "typed" << 0ull;
}

void TestTensorIndex::everyPlace()
{
    QFETCH(int, position);
    QFETCH(QString, scope);
    QFETCH(QString, name);
    QFETCH(QString, kind);
    QFETCH(int, dtype);
    QFETCH(QList<qint64>, shape);
    QFETCH(quint64, elements);
    QFETCH(quint64, bytes);
    QFETCH(QString, storage);
    QFETCH(quint64, offset);

    const auto& tensors = m_model->tensors();
    QVERIFY(size_t(position) < tensors.size());
    const TensorInfo& t = tensors[size_t(position)];
    QCOMPARE(qs(t.scope), scope);
    QCOMPARE(qs(t.name), name);
    QCOMPARE(qs(std::string(kindName(t.kind))), kind);
    QCOMPARE(t.dataType, dtype);
    QCOMPARE(QList<qint64>(t.shape.begin(), t.shape.end()), shape);
    QCOMPARE(t.elements().value_or(~0ull), elements);
    QCOMPARE(t.bytes.value_or(~0ull), bytes);
    QCOMPARE(qs(std::string(storageName(t.storage))), storage);
    QVERIFY(!t.hasError);

    auto read = m_model->read(size_t(position));
    if (t.dataType == 8) {
        QVERIFY(!read.ok()); // strings have no byte image; reading says so instead of guessing
        return;
    }
    QVERIFY_OK(read);
    QCOMPARE(quint64(read->bytes().size()), bytes);
    if (t.isExternal()) {
        QCOMPARE(qs(t.external->location()), QString("weights.bin"));
        QCOMPARE(t.external->offset, offset);
        QCOMPARE(t.external->length.value_or(~0ull), bytes);
        QVERIFY(t.external->file());
    }
    const auto built = m_built.find(t.qualifiedName());
    if (built != m_built.end())
        QCOMPARE(bytesOf(*read), built->second);
    else if (t.storage == Storage::Raw) {
        QVERIFY(m_model->loadProtos().ok()); // the index is read without protobuf: compare
        QCOMPARE(bytesOf(*read), t.proto->raw_data());
    }
}

void TestTensorIndex::nothingElseIsFound()
{
    QCOMPARE(m_model->tensors().size(), size_t(23));
}

void TestTensorIndex::loadingMapsNothing()
{
    // A fresh load: every external tensor has its shared file attached, none of them mapped.
    auto fresh = Model::load(m_dir.filePath("model.onnx").toStdString());
    QVERIFY(fresh.ok());
    int external = 0;
    for (const auto& t : (*fresh)->tensors()) {
        if (!t.isExternal())
            continue;
        ++external;
        QVERIFY(t.external->file());
        QCOMPARE(t.external->file()->mapCount(), 0);
    }
    QCOMPARE(external, 4);
}

void TestTensorIndex::oneMappingPerFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    constexpr int kCount = 2500;
    onnx::ModelProto model = emptyModel();
    DataFileBuilder data("many.bin");
    std::vector<std::string> expected;
    for (int i = 0; i < kCount; ++i) {
        auto t = rawTensor("t" + std::to_string(i), 1, {1 + i % 5},
            patternBytes(4 * uint64_t(1 + i % 5), uint8_t(i)));
        expected.push_back(t.raw_data());
        data.append(t, 1 + uint64_t(i % 3)); // mixed alignment, still one file
        *model.mutable_graph()->add_initializer() = t;
    }
    QVERIFY(data.save(dir.path()));
    QVERIFY(saveModel(model, dir.filePath("model.onnx")));
    auto loaded = Model::load(dir.filePath("model.onnx").toStdString());
    QVERIFY(loaded.ok());
    const Model& m = **loaded;
    QCOMPARE(m.tensors().size(), size_t(kCount));
    QVERIFY(m.problems().empty());

    const std::shared_ptr<DataFile> shared = m.tensors().front().external->file();
    QVERIFY(shared);
    QCOMPARE(shared->mapCount(), 0);
    for (size_t i = 0; i < m.tensors().size(); ++i) {
        QCOMPARE(m.tensors()[i].external->file().get(), shared.get());
        auto bytes = m.read(i);
        QVERIFY(bytes.ok());
        QCOMPARE(bytesOf(*bytes), expected[i]);
    }
    QCOMPARE(shared->mapCount(), 1);
}

// Issue 37: an entry allocates nothing for its scope or its external reference. The tensors of
// one graph hold one scope string (not a copy each), and an external tensor's reference lies
// inside its entry (not on the heap).
void TestTensorIndex::entriesShareScopesAndHoldReferences()
{
    auto fresh = Model::load(m_dir.filePath("model.onnx").toStdString());
    QVERIFY_OK(fresh);
    std::map<std::string, const std::string*> scopeText;
    int external = 0;
    for (const TensorInfo& t : (*fresh)->tensors()) {
        const std::string& scope = t.scope;
        const auto [first, added] = scopeText.emplace(scope, &scope);
        if (!added && first->second != &scope)
            QFAIL(qPrintable("two copies of scope '" + qs(scope) + "' (" + qs(t.name) + ")"));
        if (!t.isExternal())
            continue;
        ++external;
        const auto* entry = reinterpret_cast<const char*>(&t);
        const auto* ref = reinterpret_cast<const char*>(&*t.external);
        QVERIFY2(ref >= entry && ref < entry + sizeof(TensorInfo), t.name.c_str());
    }
    QCOMPARE(external, 4);
    QVERIFY(scopeText.size() >= 5); // graph, subgraphs at depth, the function
}

void TestTensorIndex::hugeShapes_data()
{
    QTest::addColumn<QList<qint64>>("shape");
    QTest::addColumn<bool>("counted"); // element count known
    QTest::addColumn<bool>("known"); // byte size known
    QTest::addColumn<quint64>("bytes");
    QTest::addColumn<QString>("code"); // expected error, "" for none

    const qint64 big = qint64(1) << 40;
    QTest::newRow("product overflows")
        << QList<qint64>{big, big} << false << false << 0ull << "size-overflow";
    QTest::newRow("bytes overflow")
        << QList<qint64>{qint64(1) << 62} << true << false << 0ull << "size-overflow";
    QTest::newRow("negative dim") << QList<qint64>{4, -1} << false << false << 0ull << "bad-dims";
    // 0 x anything is empty: nothing overflows, whatever the order of the dims.
    QTest::newRow("zero after huge dims")
        << QList<qint64>{big, big, 0} << true << true << 0ull << "";
    QTest::newRow("zero before huge dims")
        << QList<qint64>{0, big, big} << true << true << 0ull << "";
}

void TestTensorIndex::hugeShapes()
{
    QFETCH(QList<qint64>, shape);
    QFETCH(bool, counted);
    QFETCH(bool, known);
    QFETCH(quint64, bytes);
    QFETCH(QString, code);

    auto proto = std::make_unique<onnx::ModelProto>(emptyModel());
    auto t = rawTensor("t", 1, {}, std::string());
    for (qint64 d : shape)
        t.add_dims(d);
    *proto->mutable_graph()->add_initializer() = t;
    auto model = Model::fromProto(std::move(proto), m_dir.path().toStdString());
    QCOMPARE(model->tensors().size(), size_t(1));
    const TensorInfo& info = model->tensors()[0];
    QCOMPARE(info.elements().has_value(), counted);
    QCOMPARE(info.bytes.has_value(), known);
    QCOMPARE(info.byteSize(), bytes);
    QStringList codes;
    for (const auto& p : model->problems())
        codes << QString::fromStdString(p.code);
    QCOMPARE(codes, code.isEmpty() ? QStringList{} : QStringList{code});
}

QTEST_APPLESS_MAIN(TestTensorIndex)
#include "tst_tensor_index.moc"
