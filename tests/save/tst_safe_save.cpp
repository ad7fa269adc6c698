// save(): in place over the model's own data, deterministic and idempotent, through symlinks,
// consolidating many files, invalidating stale handles, Save As, progress, padding, checksums.
// Expected bytes are captured from the fixture before saving; expected sizes are computed here.
#include "core/inspect/verify.h"
#include "core/model/data_file.h"
#include "core/model/model.h"
#include "core/save/save.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/model_builder.h"
#include "tests/support/result_checks.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <onnx/onnx_pb.h>

using namespace repack;
using namespace fixtures;

namespace {

constexpr uint64_t MiB = 1 << 20;

// Mixed sizes: inline ones, small external ones, and two past the 1 MiB align threshold.
const std::vector<uint64_t> kSizes{100, 2000, 1500000, 3000, 64, MiB, 1500, 4096};

// Evaluates `expr` (a save, say) exactly once and fails with its error message.
uint64_t alignUp(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

// The data file SPEC section 5 prescribes for uint8 tensors of `sizes` with default options:
// declaration order, >= 1024 bytes external, >= 1 MiB at 4096-byte offsets.
uint64_t expectedDataBytes(const std::vector<uint64_t>& sizes)
{
    uint64_t end = 0;
    for (uint64_t s : sizes) {
        if (s < 1024)
            continue;
        end = (s >= MiB ? alignUp(end, 4096) : end) + s;
    }
    return end;
}

std::map<std::string, std::string> expectedTensors(const std::vector<uint64_t>& sizes)
{
    std::map<std::string, std::string> out;
    for (size_t i = 0; i < sizes.size(); ++i)
        out["graph/" + tensorName(i)] = tensorContent(i, sizes[i]);
    return out;
}

QString sha1Hex(const std::string& bytes)
{
    return QCryptographicHash::hash(
        QByteArrayView(bytes.data(), qsizetype(bytes.size())), QCryptographicHash::Sha1)
        .toHex();
}

int firstExternal(const Model& model)
{
    for (size_t i = 0; i < model.tensors().size(); ++i)
        if (model.tensors()[i].isExternal())
            return int(i);
    return -1;
}

} // namespace

class TestSafeSave : public QObject {
    Q_OBJECT
private slots:
    void inPlaceKeepsEveryTensor();
    void savingTwiceIsByteIdentical();
    void fiveInPlaceResavesDoNotGrow();
    void symlinkedDataPathIsReplacedNotWrittenThrough();
    void thousandFilesConsolidateIntoOne();
    void replacedFileInvalidatesHandles();
    void saveAsLeavesOldFilesAndHandles();
    void otherModelOfReplacedFileNeverReadsWrongBytes();
    void progressIsMonotonicUpToTotal();
    void paddingReadsAsZeros();
    void checksumIsSha1AndVerifies();
};

void TestSafeSave::inPlaceKeepsEveryTensor()
{
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    const auto before = readAllTensors(*model);
    QCOMPARE(before, expectedTensors(kSizes)); // the fixture is what we think it is

    auto report = save(*model, path.toStdString(), SaveOptions{});
    QVERIFY_OK(report);
    QCOMPARE(readAllTensors(*model), before);
    auto reloaded = loadModel(path);
    QVERIFY(reloaded);
    QVERIFY(!reloaded->hasErrors());
    QCOMPARE(readAllTensors(*reloaded), before);
    QCOMPARE(saveTempsIn(dir.path()), QStringList());
}

void TestSafeSave::savingTwiceIsByteIdentical()
{
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    QVERIFY(QDir(dir.path()).mkdir("a") && QDir(dir.path()).mkdir("b"));
    const QString a = dir.filePath("a/m.onnx"), b = dir.filePath("b/m.onnx");

    auto first = loadModel(path);
    auto second = loadModel(path);
    QVERIFY(first && second);
    QVERIFY_OK(save(*first, a.toStdString(), SaveOptions{}));
    QVERIFY_OK(save(*second, b.toStdString(), SaveOptions{}));
    QCOMPARE(fileContents(a), fileContents(b));
    QCOMPARE(fileContents(a + ".data"), fileContents(b + ".data"));
    QVERIFY(!fileContents(a + ".data").isEmpty());

    // And saving a saved model over itself changes nothing, byte for byte.
    const QByteArray model1 = fileContents(a), data1 = fileContents(a + ".data");
    QVERIFY_OK(save(*first, a.toStdString(), SaveOptions{}));
    QCOMPARE(fileContents(a), model1);
    QCOMPARE(fileContents(a + ".data"), data1);
    QCOMPARE(saveTempsIn(dir.filePath("a")), QStringList());
}

void TestSafeSave::fiveInPlaceResavesDoNotGrow()
{
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    const uint64_t expected = expectedDataBytes(kSizes);
    // By hand: 2000 @0; 1500000 @4096; 3000 @1504096; 1 MiB @1507328; 1500 @2555904;
    // 4096 @2557404, ending at 2561500. The literal guards the helper.
    QCOMPARE(expected, 2561500u);
    for (int round = 0; round < 5; ++round) {
        auto model = loadModel(path);
        QVERIFY(model);
        QVERIFY_OK(save(*model, path.toStdString(), SaveOptions{}));
        QCOMPARE(uint64_t(QFileInfo(path + ".data").size()), expected);
        QCOMPARE(readAllTensors(*model), expectedTensors(kSizes));
    }
    // Only the model and its data remain: the old layout's file was replaced, not kept.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden),
        (QStringList{"m.onnx", "m.onnx.data"}));
}

// SPEC 5a: a link at a destination is replaced by the new regular file; its target (a cache
// blob other snapshots share, a file on another disk) keeps its bytes.
void TestSafeSave::symlinkedDataPathIsReplacedNotWrittenThrough()
{
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir("store"));
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "store/weights.bin");
    QVERIFY(QFile::link("store/weights.bin", dir.filePath("m.onnx.data")));
    const QByteArray blob = fileContents(dir.filePath("store/weights.bin"));
    auto model = loadModel(path);
    QVERIFY(model);
    QVERIFY(!model->hasErrors());

    QVERIFY_OK(save(*model, path.toStdString(), SaveOptions{}));
    const QFileInfo link(dir.filePath("m.onnx.data"));
    QVERIFY(!link.isSymLink());
    QVERIFY(link.isFile());
    QCOMPARE(uint64_t(link.size()), expectedDataBytes(kSizes));
    QCOMPARE(fileContents(dir.filePath("store/weights.bin")), blob);
    auto reloaded = loadModel(path);
    QVERIFY(reloaded);
    QCOMPARE(readAllTensors(*reloaded), expectedTensors(kSizes));
    QCOMPARE(saveTempsIn(dir.path()), QStringList());
    QCOMPARE(saveTempsIn(dir.filePath("store")), QStringList());
}

void TestSafeSave::thousandFilesConsolidateIntoOne()
{
    constexpr size_t kCount = 1200;
    QTemporaryDir dir;
    onnx::ModelProto proto = emptyModel();
    std::vector<uint64_t> sizes;
    for (size_t i = 0; i < kCount; ++i) {
        sizes.push_back(1024 + i % 50);
        auto t
            = rawTensor(tensorName(i), 2, {int64_t(sizes.back())}, tensorContent(i, sizes.back()));
        DataFileBuilder file("w/" + tensorName(i) + ".bin");
        file.externalize(t, 0);
        QVERIFY(file.save(dir.path()));
        *proto.mutable_graph()->add_initializer() = std::move(t);
    }
    const QString path = dir.filePath("m.onnx");
    QVERIFY(saveModel(proto, path));
    auto model = loadModel(path);
    QVERIFY(model);
    QVERIFY(!model->hasErrors());

    QVERIFY_OK(save(*model, path.toStdString(), SaveOptions{}));
    for (const auto& t : model->tensors()) {
        QVERIFY(t.isExternal());
        QCOMPARE(t.external->location(), std::string("m.onnx.data"));
    }
    auto reloaded = loadModel(path);
    QVERIFY(reloaded);
    QCOMPARE(readAllTensors(*reloaded), expectedTensors(sizes));
    uint64_t total = 0;
    for (auto s : sizes)
        total += s;
    QCOMPARE(uint64_t(QFileInfo(path + ".data").size()), total); // all below 1 MiB: dense
}

void TestSafeSave::replacedFileInvalidatesHandles()
{
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    const int index = firstExternal(*model);
    QVERIFY(index >= 0);
    QVERIFY(model->read(size_t(index)).ok()); // mapped before the save
    const TensorInfo stale = model->tensors()[size_t(index)];
    QVERIFY(stale.external->file());

    QVERIFY_OK(save(*model, path.toStdString(), SaveOptions{}));

    auto old = stale.external->file()->view(stale.external->offset, stale.byteSize());
    QVERIFY(!old.ok());
    QVERIFY2(
        old.error().message.find("invalidated") != std::string::npos, old.error().message.c_str());

    // The saved model reads the new bytes and names the files and offsets now on disk.
    QCOMPARE(readAllTensors(*model), expectedTensors(kSizes));
    auto onDisk = loadModel(path);
    QVERIFY(onDisk);
    QCOMPARE(model->tensors().size(), onDisk->tensors().size());
    for (size_t i = 0; i < model->tensors().size(); ++i) {
        const TensorInfo& mine = model->tensors()[i];
        const TensorInfo& disk = onDisk->tensors()[i];
        QCOMPARE(mine.isExternal(), disk.isExternal());
        QCOMPARE(mine.external->location(), disk.external->location());
        QCOMPARE(mine.external->offset, disk.external->offset);
        QCOMPARE(mine.external->resolvedPath(), disk.external->resolvedPath());
    }
    // The fixture stored t2 after junk; the save moved it, so offsets really changed.
    QVERIFY(model->tensors()[size_t(index)].external->offset != stale.external->offset);
}

void TestSafeSave::saveAsLeavesOldFilesAndHandles()
{
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir("src") && QDir(dir.path()).mkdir("out"));
    const QString path
        = writeUint8Model(dir.filePath("src"), "m.onnx", kSizes, 1024, "m.onnx.data");
    const auto hashes = hashFolder(dir.filePath("src"));
    auto model = loadModel(path);
    QVERIFY(model);
    const int index = firstExternal(*model);
    QVERIFY(model->read(size_t(index)).ok());
    const TensorInfo oldHandle = model->tensors()[size_t(index)];

    const QString out = dir.filePath("out/copy.onnx");
    QVERIFY_OK(save(*model, out.toStdString(), SaveOptions{}));

    QCOMPARE(hashFolder(dir.filePath("src")), hashes);
    auto view = oldHandle.external->file()->view(oldHandle.external->offset, oldHandle.byteSize());
    QVERIFY_OK(view);
    QCOMPARE(std::string(reinterpret_cast<const char*>(view->data()), view->size()),
        tensorContent(size_t(index), kSizes[size_t(index)]));
    auto original = loadModel(path);
    QVERIFY(original);
    QCOMPARE(readAllTensors(*original), expectedTensors(kSizes));

    QCOMPARE(QString::fromStdString(model->path().string()), out);
    QCOMPARE(model->tensors()[size_t(index)].external->resolvedPath().string(),
        (out + ".data").toStdString());
    QCOMPARE(readAllTensors(*model), expectedTensors(kSizes));
    QCOMPARE(saveTempsIn(dir.filePath("out")), QStringList());
}

void TestSafeSave::otherModelOfReplacedFileNeverReadsWrongBytes()
{
    // Two Model objects of the same files (a GUI tab and a diff, say); one saves in place and
    // moves every tensor. The other, which had not read yet, must read the right bytes or
    // fail with "invalidated": never the new file's bytes at its old offsets.
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 1024, "m.onnx.data");
    auto saver = loadModel(path);
    auto other = loadModel(path);
    QVERIFY(saver && other);
    QVERIFY_OK(save(*saver, path.toStdString(), SaveOptions{}));

    for (size_t i = 0; i < kSizes.size(); ++i) {
        if (!other->tensors()[i].isExternal())
            continue;
        auto bytes = other->read(i);
        if (!bytes.ok()) {
            QVERIFY2(bytes.error().message.find("invalidated") != std::string::npos,
                bytes.error().message.c_str());
            continue;
        }
        const auto view = bytes->bytes();
        QCOMPARE(std::string(reinterpret_cast<const char*>(view.data()), view.size()),
            tensorContent(i, kSizes[i]));
    }
}

void TestSafeSave::progressIsMonotonicUpToTotal()
{
    QTemporaryDir dir;
    // A 200 MiB tensor spans several copy chunks, so progress comes in more than one step.
    const std::vector<uint64_t> sizes{2000, 200 * MiB, 100, 3000};
    const QString path = writeUint8Model(dir.path(), "m.onnx", sizes, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    std::vector<Progress> seen;
    SaveOptions options;
    options.progress = [&](const Progress& p) {
        seen.push_back({p.bytesDone, p.bytesTotal, {}, {}});
    };
    QVERIFY_OK(save(*model, path.toStdString(), options));

    const uint64_t total = 2000 + 200 * MiB + 3000;
    QVERIFY(seen.size() >= 4);
    for (size_t i = 0; i < seen.size(); ++i) {
        QCOMPARE(seen[i].bytesTotal, total);
        QVERIFY(seen[i].bytesDone <= total);
        if (i > 0)
            QVERIFY2(seen[i].bytesDone > seen[i - 1].bytesDone,
                qPrintable(QString("step %1: %2 after %3")
                               .arg(i)
                               .arg(seen[i].bytesDone)
                               .arg(seen[i - 1].bytesDone)));
    }
    QCOMPARE(seen.back().bytesDone, total);
}

void TestSafeSave::paddingReadsAsZeros()
{
    QTemporaryDir dir;
    // The fixture has 0xEE junk between tensors; none of it may survive as padding.
    const std::vector<uint64_t> sizes{1500, MiB + 5, 3000, MiB};
    const QString path = writeUint8Model(dir.path(), "m.onnx", sizes, 1024, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    QVERIFY_OK(save(*model, path.toStdString(), SaveOptions{}));

    const QByteArray data = fileContents(path + ".data");
    QCOMPARE(uint64_t(data.size()), expectedDataBytes(sizes));
    std::vector<bool> covered(size_t(data.size()), false);
    for (const auto& t : model->tensors())
        for (uint64_t b = t.external->offset; b < t.external->offset + t.byteSize(); ++b)
            covered[b] = true;
    uint64_t padding = 0;
    for (qsizetype i = 0; i < data.size(); ++i) {
        if (covered[size_t(i)])
            continue;
        ++padding;
        QVERIFY2(data[i] == 0, qPrintable(QString("byte %1 of padding is not zero").arg(i)));
    }
    QVERIFY(padding > 0); // the layout really has padding to check
}

void TestSafeSave::checksumIsSha1AndVerifies()
{
    QTemporaryDir dir;
    const QString path = writeUint8Model(dir.path(), "m.onnx", kSizes, 64, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    SaveOptions options;
    options.checksum = true;
    options.threshold = 1; // inline sources and external sources both get hashed
    QVERIFY_OK(save(*model, path.toStdString(), options));

    auto reloaded = loadModel(path);
    QVERIFY(reloaded);
    QCOMPARE(reloaded->tensors().size(), kSizes.size());
    for (size_t i = 0; i < kSizes.size(); ++i) {
        const TensorInfo& t = reloaded->tensors()[i];
        QVERIFY(t.isExternal());
        QCOMPARE(
            QString::fromStdString(*t.external->checksum), sha1Hex(tensorContent(i, kSizes[i])));
    }
    for (const auto& p : verify(*reloaded))
        QVERIFY2(p.severity != Severity::Error, p.message.c_str());
}

QTEST_GUILESS_MAIN(TestSafeSave)
#include "tst_safe_save.moc"
