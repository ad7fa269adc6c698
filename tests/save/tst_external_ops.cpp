// The five external-data operations of SPEC section 4. Expected bytes come from the fixture
// builders (and, for typed tensors, from the values the builder wrote), never from the core.
#include "core/model/model.h"
#include "core/save/external_data.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/folder_fixtures.h"
#include "tests/support/model_builder.h"
#include "tests/support/result_checks.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <onnx/onnx_pb.h>

#include <cstring>

using namespace repack;
using namespace fixtures;

namespace {

constexpr uint64_t MiB = 1 << 20;

// `length` bytes at `offset` of `path`, read with Qt.
std::string bytesAt(const QString& path, uint64_t offset, uint64_t length)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly) || !file.seek(qint64(offset)))
        return "<unreadable>";
    const QByteArray bytes = file.read(qint64(length));
    return bytes.toStdString();
}

std::string externalKey(const onnx::TensorProto& t, const std::string& key)
{
    for (const auto& kv : t.external_data())
        if (kv.key() == key)
            return kv.value();
    return {};
}

// Little-endian float32 bytes of typedTensor(..., 1, {n}): values i + 0.5.
std::string typedFloatBytes(int n)
{
    std::string out;
    for (int i = 0; i < n; ++i) {
        const float v = float(i) + 0.5f;
        char b[4];
        std::memcpy(b, &v, 4);
        out.append(b, 4);
    }
    return out;
}

} // namespace

class TestExternalOps : public QObject {
    Q_OBJECT
private slots:
    void setBaseDirReresolves();
    void loadToModelBringsAllInline();
    void unloadFromModelSplitsByThreshold();
    void convertToExternalKeepsInputOrder();
    void convertFromExternalCopiesRawData();
    void loadToModelPast2GiBFailsUnchanged();
    void aFileAnotherModelReadsNeedsConsent();
};

void TestExternalOps::setBaseDirReresolves()
{
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir("here") && QDir(dir.path()).mkdir("there"));
    // The same model in two folders; only "there" holds its data file.
    const QString path
        = writeUint8Model(dir.filePath("there"), "m.onnx", {2000, 3000}, 1024, "w.bin");
    QVERIFY(QFile::copy(path, dir.filePath("here/m.onnx")));
    auto model = loadModel(dir.filePath("here/m.onnx"));
    QVERIFY(model);
    QVERIFY(model->hasErrors()); // w.bin is missing beside it

    setBaseDir(*model, dir.filePath("there").toStdString());
    QVERIFY(!model->hasErrors());
    for (const auto& t : model->tensors())
        QCOMPARE(QString::fromStdString(t.external->resolvedPath().string()),
            dir.filePath("there/w.bin"));
    QCOMPARE(readAllTensors(*model).at("graph/t1"), tensorContent(1, 3000));
}

void TestExternalOps::loadToModelBringsAllInline()
{
    QTemporaryDir dir;
    const std::vector<uint64_t> sizes{10, 2000, 3000, 0};
    const QString path = writeUint8Model(dir.path(), "m.onnx", sizes, 1024, "w.bin");
    auto model = loadModel(path);
    QVERIFY(model);
    QCOMPARE(model->tensors()[1].storage, Storage::External);

    QVERIFY_OK(loadToModel(*model));
    for (size_t i = 0; i < sizes.size(); ++i) {
        const onnx::TensorProto& t = model->proto().graph().initializer(int(i));
        QVERIFY(t.data_location() != onnx::TensorProto::EXTERNAL);
        QCOMPARE(t.external_data_size(), 0);
        QCOMPARE(t.raw_data(), tensorContent(i, sizes[i]));
        QVERIFY(!model->tensors()[i].isExternal());
    }
    QVERIFY(!model->hasErrors());
}

void TestExternalOps::unloadFromModelSplitsByThreshold()
{
    QTemporaryDir dir;
    // t0 big inline, t1 small inline, t2 small external, t3 big external (old file w.bin).
    onnx::ModelProto proto = emptyModel();
    const std::vector<uint64_t> sizes{4000, 100, 200, 5000};
    for (size_t i = 0; i < sizes.size(); ++i)
        *proto.mutable_graph()->add_initializer()
            = rawTensor(tensorName(i), 2, {int64_t(sizes[i])}, tensorContent(i, sizes[i]));
    DataFileBuilder old("w.bin");
    old.append(*proto.mutable_graph()->mutable_initializer(2));
    old.append(*proto.mutable_graph()->mutable_initializer(3));
    QVERIFY(old.save(dir.path()));
    QVERIFY(saveModel(proto, dir.filePath("m.onnx")));
    auto model = loadModel(dir.filePath("m.onnx"));
    QVERIFY(model);

    QVERIFY_OK(unloadFromModel(*model, dir.path().toStdString(), "u.bin", 1000));
    const std::vector<bool> external{true, false, false, true};
    for (size_t i = 0; i < sizes.size(); ++i) {
        const TensorInfo& t = model->tensors()[i];
        QCOMPARE(t.isExternal(), bool(external[i]));
        if (t.isExternal()) {
            QCOMPARE(t.external->location(), std::string("u.bin"));
            QCOMPARE(bytesAt(dir.filePath("u.bin"), t.external->offset, sizes[i]),
                tensorContent(i, sizes[i]));
        } else {
            QCOMPARE(t.proto->raw_data(), tensorContent(i, sizes[i]));
        }
    }
    QCOMPARE(readAllTensors(*model).at("graph/t3"), tensorContent(3, 5000));
    QCOMPARE(saveTempsIn(dir.path()), QStringList());
}

void TestExternalOps::convertToExternalKeepsInputOrder()
{
    QTemporaryDir dir;
    std::vector<onnx::TensorProto> tensors;
    tensors.push_back(rawTensor("z", 2, {3000}, tensorContent(0, 3000)));
    tensors.push_back(typedTensor("a", 1, {17})); // typed float_data, not raw
    tensors.push_back(rawTensor("m", 2, {5}, tensorContent(2, 5)));
    const std::vector<std::string> expected{
        tensorContent(0, 3000), typedFloatBytes(17), tensorContent(2, 5)};

    auto result = convertTensorsToExternal(tensors, dir.path().toStdString(), "c.bin");
    QVERIFY_OK(result);
    QCOMPARE(result->size(), 3u);
    const std::vector<std::string> names{"z", "a", "m"};
    for (size_t i = 0; i < 3; ++i) {
        const onnx::TensorProto& t = (*result)[i];
        QCOMPARE(t.name(), names[i]);
        QCOMPARE(t.data_location(), onnx::TensorProto::EXTERNAL);
        QCOMPARE(t.raw_data().size(), 0u);
        QCOMPARE(t.float_data_size(), 0);
        QCOMPARE(externalKey(t, "location"), std::string("c.bin"));
        const uint64_t offset = std::stoull(externalKey(t, "offset"));
        const uint64_t length = std::stoull(externalKey(t, "length"));
        QCOMPARE(length, uint64_t(expected[i].size()));
        QCOMPARE(bytesAt(dir.filePath("c.bin"), offset, length), expected[i]);
    }
}

void TestExternalOps::convertFromExternalCopiesRawData()
{
    QTemporaryDir dir;
    DataFileBuilder data("sub/e.bin");
    std::vector<onnx::TensorProto> tensors;
    std::vector<std::string> expected;
    for (size_t i = 0; i < 3; ++i) {
        auto t = rawTensor(
            tensorName(i), 2, {int64_t(100 * (i + 1))}, tensorContent(i, 100 * (i + 1)));
        expected.push_back(t.raw_data());
        data.appendFill(3);
        data.append(t);
        tensors.push_back(std::move(t));
    }
    QVERIFY(data.save(dir.path()));

    auto result = convertTensorsFromExternal(tensors, dir.path().toStdString());
    QVERIFY_OK(result);
    QCOMPARE(result->size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        const onnx::TensorProto& t = (*result)[i];
        QCOMPARE(t.name(), tensorName(i));
        QVERIFY(t.data_location() != onnx::TensorProto::EXTERNAL);
        QCOMPARE(t.external_data_size(), 0);
        QCOMPARE(t.raw_data(), expected[i]);
    }
    // A copy: the data file itself is untouched.
    QCOMPARE(fileContents(dir.filePath("sub/e.bin")).toStdString(), data.bytes());
}

// Issue 35: a.onnx and c.onnx read sub/w.bin (c further in); writing a's tensors into it, by
// either operation, would leave c reading other bytes: consent, naming c, nothing written. The
// readers are looked for above the file too, not only beside it.
void TestExternalOps::aFileAnotherModelReadsNeedsConsent()
{
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath("sub"));
    const std::string embed = patternBytes(4096, 21);
    QVERIFY(writeGraph(dir.path(), "a.onnx", "sub/w.bin", {{"embed", embed}}));
    QVERIFY(writeGraph(
        dir.path(), "c.onnx", "sub/w.bin", {{"embed", embed}, {"own", patternBytes(2048, 22)}}));
    const auto before = hashFolder(dir.filePath("sub"));
    auto model = loadModel(dir.filePath("a.onnx"));
    QVERIFY(model);

    const Status unloaded = unloadFromModel(*model, dir.path().toStdString(), "sub/w.bin", 0);
    QVERIFY(!unloaded);
    QCOMPARE(unloaded.error().kind, ErrorKind::ConsentNeeded);
    QVERIFY2(unloaded.error().message.find("c.onnx reads it") != std::string::npos,
        unloaded.error().message.c_str());
    QCOMPARE(hashFolder(dir.filePath("sub")), before);

    std::vector<onnx::TensorProto> tensors{rawTensor("z", 2, {3000}, tensorContent(0, 3000))};
    auto converted = convertTensorsToExternal(tensors, dir.path().toStdString(), "sub/w.bin");
    QVERIFY(!converted);
    QCOMPARE(converted.error().kind, ErrorKind::ConsentNeeded);
    QVERIFY2(converted.error().message.find("c.onnx reads it") != std::string::npos,
        converted.error().message.c_str());
    QCOMPARE(hashFolder(dir.filePath("sub")), before);
    QCOMPARE(saveTempsIn(dir.filePath("sub")), QStringList());
}

void TestExternalOps::loadToModelPast2GiBFailsUnchanged()
{
    QTemporaryDir dir;
    const QString path = writeSparseModel(dir.path(), "big.onnx", 3, 800 * MiB, "big.bin");
    QVERIFY(!path.isEmpty());
    auto model = loadModel(path);
    QVERIFY(model);
    const std::string before = model->proto().SerializeAsString();

    Status status = loadToModel(*model);
    QVERIFY(!status.ok());
    QVERIFY2(
        status.error().message.find("2 GiB") != std::string::npos, status.error().message.c_str());
    QCOMPARE(model->proto().SerializeAsString(), before);
    QVERIFY(model->tensors()[0].isExternal());
    QVERIFY(model->read(0).ok());
}

QTEST_GUILESS_MAIN(TestExternalOps)
#include "tst_external_ops.moc"
