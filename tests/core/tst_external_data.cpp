// External-data validation (SPEC section 3): every broken reference is a problem with a stable
// code naming the tensor, never a crash, and reading the tensor is an error, never bytes; no
// data file outside the model's directory is ever attached for reading.
#include "core/model/data_file.h"
#include "core/model/model.h"
#include "core/problem.h"
#include "core/save/save.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/model_builder.h"
#include "tests/support/result_checks.h"
#include "tests/support/tensor_builder.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

using namespace repack;
using namespace fixtures;
namespace fs = std::filesystem;

namespace {

// How the tensor under test ("victim") is broken.
enum class Case {
    NulInLocation,
    DotDot,
    DotDotInside,
    Absolute,
    SymlinkFile,
    SymlinkDir,
    Missing,
    Directory,
    Fifo,
    OffsetPastEof,
    RangePastEof,
    NegativeOffset,
    NonNumericOffset,
    TrailingJunkOffset,
    NegativeLength,
    LengthAllOnes,
    LengthMismatch,
    OrtMarker,
    ExternalString,
    ExternalWithRaw,
    ExternalWithTyped,
    EmptyLocation,
    MissingLocation,
    DimsOverflow,
    NegativeDims,
    UnknownKey,
    InlineDimsOverflow,
    UnknownDtypeNoLength,
};

constexpr uint64_t kVictimBytes = 16; // float [4]

std::string bytesOf(const TensorBytes& t)
{
    auto b = t.bytes();
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

bool isUnder(const fs::path& path, const fs::path& dir)
{
    const auto rel = fs::weakly_canonical(path).lexically_relative(fs::canonical(dir));
    return !rel.empty() && *rel.begin() != "..";
}

// Breaks `victim` as `c` says; `root` holds the model folder "model/" and a secret file outside.
void breakVictim(Case c, onnx::TensorProto& victim, const QDir& root)
{
    const QString model = root.filePath("model");
    const std::string len = std::to_string(kVictimBytes);
    switch (c) {
    case Case::NulInLocation: // C readers see "data.bin", a healthy file of the folder
        setExternal(victim, std::string("data.bin\0../outside.bin", 23), "16", len);
        break;
    case Case::DotDot:
        setExternal(victim, "../outside.bin", "0", len);
        break;
    case Case::DotDotInside:
        setExternal(victim, "sub/../../outside.bin", "0", len);
        break;
    case Case::Absolute:
        setExternal(victim, root.filePath("outside.bin").toStdString(), "0", len);
        break;
    case Case::SymlinkFile:
        QFile::link(root.filePath("outside.bin"), model + "/link.bin");
        setExternal(victim, "link.bin", "0", len);
        break;
    case Case::SymlinkDir:
        QFile::link(root.path(), model + "/linkdir");
        setExternal(victim, "linkdir/outside.bin", "0", len);
        break;
    case Case::Missing:
        setExternal(victim, "nope.bin", "0", len);
        break;
    case Case::Directory:
        QDir(model).mkdir("adir");
        setExternal(victim, "adir", "0", len);
        break;
    case Case::Fifo:
        ::mkfifo((model + "/pipe").toLocal8Bit().constData(), 0600);
        setExternal(victim, "pipe", "0", len);
        break;
    case Case::OffsetPastEof:
        setExternal(victim, "data.bin", "100000", len);
        break;
    case Case::RangePastEof:
        setExternal(victim, "data.bin", "60", len);
        break; // file: 64 bytes
    case Case::NegativeOffset:
        setExternal(victim, "data.bin", "-1", len);
        break;
    case Case::NonNumericOffset:
        setExternal(victim, "data.bin", "abc", len);
        break;
    case Case::TrailingJunkOffset:
        setExternal(victim, "data.bin", "16x", len);
        break;
    case Case::NegativeLength:
        setExternal(victim, "data.bin", "16", "-16");
        break;
    case Case::LengthAllOnes:
        setExternal(victim, "data.bin", "16", "18446744073709551615");
        break;
    case Case::LengthMismatch:
        setExternal(victim, "data.bin", "16", "12");
        break;
    case Case::OrtMarker:
        setExternal(victim, "*/_ORT_MEM_ADDR_/*", "0", len);
        break;
    case Case::ExternalString:
        victim = typedTensor("victim", 8, {4});
        victim.clear_string_data();
        setExternal(victim, "data.bin", "16", "8");
        break;
    case Case::ExternalWithRaw:
        setExternal(victim, "data.bin", "16", len);
        victim.set_raw_data(patternBytes(kVictimBytes));
        break;
    case Case::ExternalWithTyped:
        setExternal(victim, "data.bin", "16", len);
        for (int i = 0; i < 4; ++i)
            victim.add_float_data(1.0f);
        break;
    case Case::EmptyLocation:
        setExternal(victim, "", "16", len);
        break;
    case Case::MissingLocation:
        setExternal(victim, "data.bin", "16", len);
        victim.mutable_external_data()->DeleteSubrange(0, 1);
        break;
    case Case::DimsOverflow:
        victim.clear_dims();
        victim.add_dims(int64_t(1) << 40);
        victim.add_dims(int64_t(1) << 40);
        setExternal(victim, "data.bin", "16", len);
        break;
    case Case::NegativeDims:
        victim.set_dims(0, -4);
        setExternal(victim, "data.bin", "16", len);
        break;
    case Case::InlineDimsOverflow: // stays inline: raw_data cannot match any size
        victim = rawTensor("victim", 1, {4});
        victim.set_dims(0, int64_t(1) << 62);
        break;
    case Case::UnknownDtypeNoLength: // width unknown: no way to tell which bytes are ours
        victim.set_data_type(99);
        setExternal(victim, "data.bin", "16", std::nullopt);
        break;
    case Case::UnknownKey:
        setExternal(victim, "data.bin", "16", len);
        addExternalKey(victim, "compression", "zstd");
        break;
    }
}

} // namespace

Q_DECLARE_METATYPE(Case)

class TestExternalData : public QObject {
    Q_OBJECT
private slots:
    void brokenReference_data();
    void brokenReference();
    void unknownKeyIsOnlyAWarning();
    void externalWithInlineDataIsReadFromItsFile_data();
    void externalWithInlineDataIsReadFromItsFile();
    void truncatedProtobufFailsNamingTheFile();
    void modelDirectoryReachedThroughSymlink();
    void setBaseDirReresolves();
    void tensorsOfOneFileShareItsLocation();

private:
    // Writes root/outside.bin, root/model/data.bin (64 bytes: healthy at 0, victim's at 16)
    // and root/model/model.onnx with "healthy" and "victim" externals, victim broken by `c`.
    static std::string writeFixture(const QDir& root, std::optional<Case> c);
};

std::string TestExternalData::writeFixture(const QDir& root, std::optional<Case> c)
{
    QFile outside(root.filePath("outside.bin"));
    if (outside.open(QIODevice::WriteOnly))
        outside.write(QByteArray(4096, 'S'));
    outside.close();
    root.mkpath("model");

    onnx::ModelProto model = emptyModel();
    DataFileBuilder data("data.bin");
    auto healthy = rawTensor("healthy", 1, {4});
    const std::string healthyBytes = healthy.raw_data();
    data.externalize(healthy, 0);
    auto victim = rawTensor("victim", 1, {4});
    data.externalize(victim, 16);
    data.place(32, std::string(32, '\0')); // 64 bytes in all
    if (c)
        breakVictim(*c, victim, root);
    *model.mutable_graph()->add_initializer() = healthy;
    *model.mutable_graph()->add_initializer() = victim;
    data.save(root.filePath("model"));
    saveModel(model, root.filePath("model/model.onnx"));
    return healthyBytes;
}

void TestExternalData::brokenReference_data()
{
    QTest::addColumn<Case>("brokenBy");
    QTest::addColumn<QString>("code");

    QTest::newRow("NUL byte in the location") << Case::NulInLocation << "location-nul";
    QTest::newRow("'..' escape") << Case::DotDot << "location-escapes";
    QTest::newRow("'..' inside the path") << Case::DotDotInside << "location-escapes";
    QTest::newRow("absolute path") << Case::Absolute << "absolute-location";
    QTest::newRow("symlinked file escaping") << Case::SymlinkFile << "symlink-escapes";
    QTest::newRow("symlinked folder escaping") << Case::SymlinkDir << "symlink-escapes";
    QTest::newRow("missing file") << Case::Missing << "missing-file";
    QTest::newRow("directory, not a file") << Case::Directory << "not-regular-file";
    QTest::newRow("fifo, not a file") << Case::Fifo << "not-regular-file";
    QTest::newRow("offset past EOF") << Case::OffsetPastEof << "out-of-range";
    QTest::newRow("range past EOF") << Case::RangePastEof << "out-of-range";
    QTest::newRow("negative offset") << Case::NegativeOffset << "bad-offset";
    QTest::newRow("non-numeric offset") << Case::NonNumericOffset << "bad-offset";
    QTest::newRow("offset with trailing junk") << Case::TrailingJunkOffset << "bad-offset";
    QTest::newRow("negative length") << Case::NegativeLength << "bad-length";
    // 2^64 - 1 is what the index keeps for "no length": given, it is refused, not taken as none.
    QTest::newRow("length 2^64 - 1") << Case::LengthAllOnes << "bad-length";
    QTest::newRow("length mismatch") << Case::LengthMismatch << "length-mismatch";
    QTest::newRow("ORT memory marker") << Case::OrtMarker << "memory-address";
    QTest::newRow("external string") << Case::ExternalString << "external-string";
    QTest::newRow("empty location") << Case::EmptyLocation << "empty-location";
    QTest::newRow("no location key") << Case::MissingLocation << "missing-location";
    QTest::newRow("dims product overflows") << Case::DimsOverflow << "size-overflow";
    QTest::newRow("negative dims") << Case::NegativeDims << "bad-dims";
    QTest::newRow("unknown dtype, no length") << Case::UnknownDtypeNoLength << "bad-length";
    QTest::newRow("inline dims product overflows") << Case::InlineDimsOverflow << "size-overflow";
}

void TestExternalData::brokenReference()
{
    QFETCH(Case, brokenBy);
    QFETCH(QString, code);

    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QDir root(tmp.path());
    const std::string healthyBytes = writeFixture(root, brokenBy);

    auto loaded = Model::load(root.filePath("model/model.onnx").toStdString());
    QVERIFY_OK(loaded);
    const Model& model = **loaded;
    QCOMPARE(model.tensors().size(), size_t(2));

    bool found = false;
    for (const auto& p : model.problems()) {
        QCOMPARE(QString::fromStdString(p.tensor), QString("graph/victim"));
        QVERIFY2(p.message.find("victim") != std::string::npos, p.message.c_str());
        found |= p.code == code.toStdString() && p.severity == Severity::Error;
    }
    QVERIFY2(found, qPrintable("no error with code " + code));
    QVERIFY(model.tensors()[1].hasError);
    QVERIFY_FAILS_WITH(model.read(1), "cannot read graph/victim: ");

    // The healthy neighbour is unaffected.
    QVERIFY(!model.tensors()[0].hasError);
    auto healthy = model.read(0);
    QVERIFY(healthy.ok());
    QCOMPARE(bytesOf(*healthy), healthyBytes);

    // Nothing outside the model folder is attached for reading.
    for (const auto& t : model.tensors())
        if (t.external->file())
            QVERIFY2(isUnder(t.external->file()->path(), root.filePath("model").toStdString()),
                t.external->file()->path().c_str());
}

void TestExternalData::unknownKeyIsOnlyAWarning()
{
    QTemporaryDir tmp;
    const QDir root(tmp.path());
    writeFixture(root, Case::UnknownKey);
    auto loaded = Model::load(root.filePath("model/model.onnx").toStdString());
    QVERIFY(loaded.ok());
    const Model& model = **loaded;
    QCOMPARE(model.problems().size(), size_t(1));
    QCOMPARE(model.problems()[0].code, std::string(code::UnknownKey));
    QCOMPARE(model.problems()[0].severity, Severity::Warning);
    QVERIFY(!model.hasErrors());
    auto victim = model.read(1);
    QVERIFY(victim.ok());
    QCOMPARE(bytesOf(*victim), patternBytes(kVictimBytes, uint8_t(std::string("victim").size())));
}

// onnx's rule (its test_save_model_with_existing_raw_data_should_override), and what
// numpy_helper.to_array(t, base_dir) leaves: the file wins over inline data, with a warning;
// a save writes the file's bytes and drops the inline copy.
void TestExternalData::externalWithInlineDataIsReadFromItsFile_data()
{
    QTest::addColumn<Case>("brokenBy");
    QTest::newRow("EXTERNAL with raw_data") << Case::ExternalWithRaw;
    QTest::newRow("EXTERNAL with float_data") << Case::ExternalWithTyped;
}

void TestExternalData::externalWithInlineDataIsReadFromItsFile()
{
    QFETCH(Case, brokenBy);
    QTemporaryDir tmp;
    const QDir root(tmp.path());
    writeFixture(root, brokenBy);
    const std::string fileBytes = patternBytes(kVictimBytes, uint8_t(std::string("victim").size()));
    auto loaded = Model::load(root.filePath("model/model.onnx").toStdString());
    QVERIFY_OK(loaded);
    Model& model = **loaded;
    QVERIFY(!model.hasErrors());
    QVERIFY(!model.tensors()[1].hasError);
    QCOMPARE(model.problems().size(), size_t(1));
    QCOMPARE(model.problems()[0].code, std::string(code::ExternalWithData));
    QCOMPARE(model.problems()[0].severity, Severity::Warning);
    QVERIFY2(model.problems()[0].message.find("graph/victim") != std::string::npos,
        model.problems()[0].message.c_str());
    auto victim = model.read(1);
    QVERIFY_OK(victim);
    QCOMPARE(bytesOf(*victim), fileBytes);

    // Saved inline: the file's bytes. Saved external: the file's bytes, no inline copy left.
    for (const bool external : {false, true}) {
        SaveOptions options;
        options.allInline = !external;
        options.threshold = external ? 1 : options.threshold;
        const std::string out = root.filePath(external ? "ext/m.onnx" : "inl/m.onnx").toStdString();
        fs::create_directories(fs::path(out).parent_path());
        auto reloaded = Model::load(root.filePath("model/model.onnx").toStdString());
        QVERIFY_OK(reloaded);
        QVERIFY_OK(save(**reloaded, out, options));
        auto saved = Model::load(out);
        QVERIFY_OK(saved);
        QVERIFY2((*saved)->problems().empty(),
            (*saved)->problems().empty() ? "" : (*saved)->problems()[0].message.c_str());
        QCOMPARE((*saved)->tensors()[1].isExternal(), external);
        auto bytes = (*saved)->read(1);
        QVERIFY_OK(bytes);
        QCOMPARE(bytesOf(*bytes), fileBytes);
    }

    // A re-save in place with the same layout is not "unchanged": the inline copy goes.
    SaveOptions keep;
    keep.threshold = 1;
    keep.dataFile = "data.bin";
    QVERIFY_OK(save(model, root.filePath("model/model.onnx").toStdString(), keep));
    auto again = Model::load(root.filePath("model/model.onnx").toStdString());
    QVERIFY_OK(again);
    QVERIFY((*again)->problems().empty());
    auto bytes = (*again)->read(1);
    QVERIFY_OK(bytes);
    QCOMPARE(bytesOf(*bytes), fileBytes);
}

void TestExternalData::truncatedProtobufFailsNamingTheFile()
{
    QTemporaryDir tmp;
    onnx::ModelProto model = emptyModel();
    *model.mutable_graph()->add_initializer() = rawTensor("w", 1, {256});
    const std::string bytes = model.SerializeAsString();
    const QString path = tmp.filePath("cut.onnx");
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    // Half-way lands inside the graph's 1 KiB initializer: a length-delimited field cut short.
    file.write(bytes.data(), qint64(bytes.size() / 2));
    file.close();

    auto loaded = Model::load(path.toStdString());
    QVERIFY(!loaded.ok());
    QVERIFY2(loaded.error().message.find(path.toStdString()) != std::string::npos,
        loaded.error().message.c_str());
}

void TestExternalData::modelDirectoryReachedThroughSymlink()
{
    // Like a model cache: cache/model -> store/real; references inside stay inside.
    QTemporaryDir tmp;
    const QDir root(tmp.path());
    QVERIFY(root.mkpath("store"));
    QVERIFY(root.mkpath("cache"));
    const std::string healthyBytes = writeFixture(QDir(root.filePath("store")), std::nullopt);
    QVERIFY(QFile::link(root.filePath("store/model"), root.filePath("cache/model")));

    auto loaded = Model::load(root.filePath("cache/model/model.onnx").toStdString());
    QVERIFY(loaded.ok());
    const Model& model = **loaded;
    for (const auto& p : model.problems())
        qWarning("%s", p.message.c_str());
    QVERIFY(model.problems().empty());
    auto healthy = model.read(0);
    QVERIFY(healthy.ok());
    QCOMPARE(bytesOf(*healthy), healthyBytes);
    QVERIFY(model.read(1).ok());
}

void TestExternalData::setBaseDirReresolves()
{
    QTemporaryDir tmp;
    const QDir root(tmp.path());
    const std::string healthyBytes = writeFixture(root, std::nullopt);
    // Move the data away: the model still opens, with missing-file problems.
    QVERIFY(root.mkpath("elsewhere"));
    QVERIFY(QFile::rename(root.filePath("model/data.bin"), root.filePath("elsewhere/data.bin")));
    auto loaded = Model::load(root.filePath("model/model.onnx").toStdString());
    QVERIFY(loaded.ok());
    Model& model = **loaded;
    QCOMPARE(model.problems().size(), size_t(2));
    for (const auto& p : model.problems())
        QCOMPARE(p.code, std::string(code::MissingFile));
    QVERIFY_FAILS_WITH(model.read(0), "data.bin");

    model.setBaseDir(root.filePath("elsewhere").toStdString());
    QVERIFY(model.problems().empty());
    auto healthy = model.read(0);
    QVERIFY(healthy.ok());
    QCOMPARE(bytesOf(*healthy), healthyBytes);

    // And back: the old directory no longer has the file.
    model.setBaseDir(root.filePath("model").toStdString());
    QVERIFY(model.hasErrors());
    QVERIFY_FAILS_WITH(model.read(0), "data.bin");
}

// The location, resolved path and file an external tensor reads are one object shared by the
// tensors naming that location (one per outcome of the checks): never one per tensor (issue 37),
// and never a file other than the one its location names, nor a file a failed check withheld.
void TestExternalData::tensorsOfOneFileShareItsLocation()
{
    QTemporaryDir tmp;
    const QDir dir(tmp.path());
    DataFileBuilder a("a.bin");
    DataFileBuilder b("b.bin");
    onnx::ModelProto model = emptyModel();
    auto add = [&](DataFileBuilder& data, const std::string& name, uint64_t offset) {
        auto t = rawTensor(name, 1, {4});
        data.externalize(t, offset);
        *model.mutable_graph()->add_initializer() = t;
    };
    add(a, "a0", 0);
    add(b, "b0", 0);
    add(a, "a1", 16);
    add(b, "b1", 16);
    auto pastEnd = rawTensor("pastEnd", 1, {4});
    pastEnd.clear_raw_data();
    setExternal(pastEnd, "a.bin", "24", "16"); // a.bin holds 32 bytes
    *model.mutable_graph()->add_initializer() = pastEnd;
    QVERIFY(a.save(dir.path()) && b.save(dir.path()));
    QVERIFY(saveModel(model, dir.filePath("model.onnx")));

    auto loaded = Model::load(dir.filePath("model.onnx").toStdString());
    QVERIFY(loaded.ok());
    const auto& t = (*loaded)->tensors();
    QCOMPARE(t.size(), size_t(5));
    const ExternalRef& a0 = *t[0].external;
    const ExternalRef& b0 = *t[1].external;
    QVERIFY(a0.shared() && a0.shared() == t[2].external->shared());
    QVERIFY(b0.shared() && b0.shared() == t[3].external->shared());
    QVERIFY(a0.shared() != b0.shared());
    for (size_t i : {0, 1, 2, 3}) {
        const ExternalRef& e = *t[i].external;
        QVERIFY(e.file());
        QCOMPARE(e.resolvedPath().filename().string(), e.location());
        QCOMPARE(e.file()->path(), e.resolvedPath());
    }
    const ExternalRef& bad = *t[4].external;
    QCOMPARE(bad.location(), std::string("a.bin"));
    QCOMPARE(bad.resolvedPath(), a0.resolvedPath());
    QVERIFY(!bad.file()); // out of range: never read, while its neighbours in a.bin are
    QVERIFY(t[4].hasError && !t[0].hasError);
    QCOMPARE((*loaded)->problems().size(), size_t(1));
    QCOMPARE((*loaded)->problems()[0].code, std::string(code::OutOfRange));
}

QTEST_APPLESS_MAIN(TestExternalData)
#include "tst_external_data.moc"
