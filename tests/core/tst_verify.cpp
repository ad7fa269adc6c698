// verify() reads every external byte range: checksums (SHA-1 hex in the "checksum" key,
// computed here with Qt's hash, independent of the core's) must match, and a data file
// truncated after loading is reported instead of crashing.
#include "core/inspect/verify.h"
#include "core/model/model.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/model_builder.h"
#include "tests/support/tensor_builder.h"

#include <QCryptographicHash>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace repack;
using namespace fixtures;

namespace {

std::string sha1Hex(const std::string& bytes)
{
    return QCryptographicHash::hash(
        QByteArrayView(bytes.data(), qsizetype(bytes.size())), QCryptographicHash::Sha1)
        .toHex()
        .toStdString();
}

std::vector<Problem> errors(const std::vector<Problem>& problems)
{
    std::vector<Problem> out;
    for (const auto& p : problems)
        if (p.severity == Severity::Error)
            out.push_back(p);
    return out;
}

} // namespace

class TestVerify : public QObject {
    Q_OBJECT
private slots:
    void checksum_data();
    void checksum();
    void truncatedAfterLoad();
};

void TestVerify::checksum_data()
{
    QTest::addColumn<quint64>("elements"); // uint8 tensor "big" with a checksum
    QTest::addColumn<QString>("tamper"); // "", "digest" (wrong key) or "flip" (file byte)
    QTest::addColumn<QString>("code"); // expected problem, "" for none

    QTest::newRow("correct checksum") << 100ull << ""
                                      << "";
    QTest::newRow("correct checksum over many buffers") << 50000ull << ""
                                                        << "";
    QTest::newRow("wrong digest in the key") << 100ull << "digest"
                                             << "checksum-mismatch";
    QTest::newRow("byte flipped on disk") << 50000ull << "flip"
                                          << "checksum-mismatch";
}

void TestVerify::checksum()
{
    QFETCH(quint64, elements);
    QFETCH(QString, tamper);
    QFETCH(QString, code);

    QTemporaryDir dir;
    onnx::ModelProto model = emptyModel();
    DataFileBuilder data("data.bin");
    auto plain = rawTensor("plain", 1, {8}); // no checksum: read but not hashed
    data.append(plain);
    auto big = rawTensor("big", 2, {qint64(elements)});
    std::string digest = sha1Hex(big.raw_data());
    const uint64_t offset = data.append(big, 64);
    if (tamper == "digest")
        digest = sha1Hex(big.name()); // a well-formed digest of other bytes
    addExternalKey(big, "checksum", digest);
    if (tamper == "flip") {
        std::string b = data.bytes().substr(offset + elements / 2, 1);
        b[0] = char(b[0] ^ 0x01);
        data.place(offset + elements / 2, b);
    }
    *model.mutable_graph()->add_initializer() = plain;
    *model.mutable_graph()->add_initializer() = big;
    QVERIFY(data.save(dir.path()));
    QVERIFY(saveModel(model, dir.filePath("m.onnx")));

    auto loaded = Model::load(dir.filePath("m.onnx").toStdString());
    QVERIFY(loaded.ok());
    QVERIFY((*loaded)->problems().empty());
    VerifyOptions options;
    options.bufferBytes = 4096; // several chunks for the 50000-byte tensor
    uint64_t lastDone = 0, total = 0;
    options.progress = [&](const Progress& p) {
        lastDone = p.bytesDone;
        total = p.bytesTotal;
    };
    const auto found = errors(verify(**loaded, options));
    QCOMPARE(total, 32 + elements);
    QCOMPARE(lastDone, total);
    if (code.isEmpty()) {
        QVERIFY(found.empty());
        return;
    }
    QCOMPARE(found.size(), size_t(1));
    QCOMPARE(QString::fromStdString(found[0].code), code);
    QCOMPARE(found[0].tensor, std::string("graph/big"));
    QVERIFY(found[0].message.find(digest) != std::string::npos);
}

void TestVerify::truncatedAfterLoad()
{
    QTemporaryDir dir;
    onnx::ModelProto model = emptyModel();
    DataFileBuilder data("data.bin");
    auto a = rawTensor("a", 1, {64});
    data.append(a);
    auto b = rawTensor("b", 1, {64});
    data.append(b);
    *model.mutable_graph()->add_initializer() = a;
    *model.mutable_graph()->add_initializer() = b;
    QVERIFY(data.save(dir.path()));
    QVERIFY(saveModel(model, dir.filePath("m.onnx")));
    auto loaded = Model::load(dir.filePath("m.onnx").toStdString());
    QVERIFY(loaded.ok());
    QVERIFY(errors(verify(**loaded)).empty());

    // Someone truncates the data file in the middle of "b" while the model is open: it is not
    // the file that was validated any more (SPEC 5a identity), so no byte of it is read, for
    // either tensor, and each error names the file.
    QVERIFY(QFile::resize(dir.filePath("data.bin"), 256 + 100));
    const auto found = errors(verify(**loaded));
    QCOMPARE(found.size(), size_t(2));
    QCOMPARE(found[0].tensor, std::string("graph/a"));
    QCOMPARE(found[1].tensor, std::string("graph/b"));
    for (const auto& p : found) {
        QCOMPARE(p.code, std::string("file-changed"));
        QVERIFY2(p.message.find("data.bin") != std::string::npos, p.message.c_str());
    }
}

QTEST_APPLESS_MAIN(TestVerify)
#include "tst_verify.moc"
