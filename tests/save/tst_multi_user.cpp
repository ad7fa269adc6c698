// Files with more than one user (SPEC section 5a), through `onnx-repack` as users run it
// ($REPACK_CLI): sibling models sharing a data file, names that alias, a download cache of
// symlinks, corrupt bytes, concurrent saves, a full disk, the open-file limit, offsets past
// 4 GiB, unused data files, permission bits and hard links. Every outcome is checked on disk:
// exit codes, files byte for byte, and what onnx's own Python loader (python3-onnx, through
// tensor_values.py) reads.
#include "core/inspect/verify.h"
#include "core/model/model.h"
#include "core/save_lock.h"
#include "tests/support/crash_fixtures.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/model_builder.h"
#include "tests/support/python_reader.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <onnx/onnx_pb.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <functional>
#include <memory>

using namespace fixtures;

namespace {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;
constexpr uint64_t GiB = 1024 * MiB;
const std::vector<uint64_t> kSizes{100, 2000, MiB + 5, 3000, 40000};
const QString kValuesScript = QStringLiteral(REPACK_VALUES_SCRIPT);

struct Run {
    int exitCode = -1; // -1: killed by a signal or did not finish
    QByteArray out;
    QByteArray err;
    QString all() const { return QString::fromUtf8(out + err); }
};

// Runs `onnx-repack ARGS` in `dir`; `modifier` runs in the child before exec.
Run runCli(const QString& dir, const QStringList& args, std::function<void()> modifier = {})
{
    QProcess process;
    process.setWorkingDirectory(dir);
    if (modifier)
        process.setChildProcessModifier(modifier);
    process.start(qEnvironmentVariable("REPACK_CLI"), args);
    Run run;
    if (!process.waitForFinished(180000))
        return run;
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    if (process.exitStatus() == QProcess::NormalExit)
        run.exitCode = process.exitCode();
    return run;
}

// The bytes writeUint8Model gives its tensors, by name.
std::map<std::string, std::string> uint8Bytes(const std::vector<uint64_t>& sizes)
{
    std::map<std::string, std::string> out;
    for (size_t i = 0; i < sizes.size(); ++i)
        out[tensorName(i)] = tensorContent(i, sizes[i]);
    return out;
}

// The m.onnx most tests start from: kSizes, >= 1 KiB external in `dataName`.
QString writeModel(const QString& dir, const std::string& dataName = "m.onnx.data")
{
    return writeUint8Model(dir, QStringLiteral("m.onnx"), kSizes, 1024, dataName);
}

std::unique_ptr<onnx::ModelProto> readProto(const QString& path)
{
    auto proto = std::make_unique<onnx::ModelProto>();
    const QByteArray bytes = fileContents(path);
    if (!proto->ParseFromArray(bytes.constData(), int(bytes.size())))
        return nullptr;
    return proto;
}

const onnx::TensorProto* findInitializer(const onnx::ModelProto& proto, const std::string& name)
{
    for (const auto& t : proto.graph().initializer())
        if (t.name() == name)
            return &t;
    return nullptr;
}

std::string externalKey(const onnx::TensorProto& tensor, const std::string& key)
{
    for (const auto& entry : tensor.external_data())
        if (entry.key() == key)
            return entry.value();
    return {};
}

std::string sha1Hex(const std::string& bytes)
{
    return QCryptographicHash::hash(
        QByteArrayView(bytes.data(), qsizetype(bytes.size())), QCryptographicHash::Sha1)
        .toHex()
        .toStdString();
}

mode_t modeOf(const QString& path)
{
    struct stat st { };
    return ::stat(QFile::encodeName(path).constData(), &st) == 0 ? st.st_mode & 07777 : 0;
}

// Empty when `path` loads in this tool, verifies without errors and reads `expected`.
std::string coreProblems(const QString& path, const std::map<std::string, std::string>& expected)
{
    auto loaded = repack::Model::load(path.toStdString());
    if (!loaded)
        return loaded.error().message;
    std::string out;
    for (const auto& p : repack::verify(**loaded))
        if (p.severity == repack::Severity::Error)
            out += p.tensor + ": " + p.code + ": " + p.message + "\n";
    return out + compareBytes(**loaded, expected);
}

// A tmpfs mounted for the life of the object (root or CAP_SYS_ADMIN only).
class TmpfsMount {
public:
    TmpfsMount(const QString& dir, const QString& size)
        : m_dir(dir)
    {
        m_mounted = QProcess::execute(QStringLiteral("mount"),
                        {"-t", "tmpfs", "-o", "size=" + size, "tmpfs", dir})
            == 0;
    }
    ~TmpfsMount()
    {
        if (m_mounted && QProcess::execute(QStringLiteral("umount"), {m_dir}) != 0)
            QProcess::execute(QStringLiteral("umount"), {"-l", m_dir});
    }
    bool mounted() const { return m_mounted; }

private:
    QString m_dir;
    bool m_mounted = false;
};

} // namespace

#define PYTHON_LOADS(path, expected, context)                                                      \
    QVERIFY_PYTHON_LOADS(kValuesScript, path, expected, QStringLiteral(context))

#define CORE_LOADS(path, expected)                                                                 \
    do {                                                                                           \
        const std::string problems_ = coreProblems(path, expected);                                \
        QVERIFY2(problems_.empty(), problems_.c_str());                                            \
    } while (false)

class TestMultiUser : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    // Files with more than one user (SPEC 5a): siblings, aliases, damaged input, caches.
    void siblingSharingDataFileNeedsConsent();
    void dataNameAliasingIsRefused_data();
    void dataNameAliasingIsRefused();
    void outputOverInputsDataFileNeedsConsent();
    void corruptChecksumIsNotCarriedSilently_data();
    void corruptChecksumIsNotCarriedSilently();
    void inlineSizeMismatchIsNotCarriedSilently_data();
    void inlineSizeMismatchIsNotCarriedSilently();
    void invalidAlignmentIsRefused_data();
    void invalidAlignmentIsRefused();
    void huggingFaceCacheBlobsStayIntact_data();
    void huggingFaceCacheBlobsStayIntact();
    // One save at a time, full disks, limits, housekeeping.
    void concurrentInPlaceSaves();
    void waitingSaveAppliesItsOptionsToTheNewModel();
    void diskFullOnTmpfsChangesNothing_data();
    void diskFullOnTmpfsChangesNothing();
    void manySourceFilesUnderOpenFileLimit_data();
    void manySourceFilesUnderOpenFileLimit();
    void offsetPast4GiB();
    void dataFileNoLongerUsed_data();
    void dataFileNoLongerUsed();
    void unreadableSiblingMeansKeep_data();
    void unreadableSiblingMeansKeep();
    void folderThatCannotBeListedIsRefused();
    void replacedFilesKeepPermissionBits_data();
    void replacedFilesKeepPermissionBits();
    void otherHardLinkKeepsItsBytes();
};

void TestMultiUser::initTestCase()
{
    QVERIFY2(QFileInfo(qEnvironmentVariable("REPACK_CLI")).isExecutable(),
        "REPACK_CLI must name the onnx-repack executable");
    QVERIFY2(QFileInfo(qEnvironmentVariable("REPACK_PYTHON")).isExecutable(),
        "REPACK_PYTHON must name a python3 with python3-onnx (/usr/bin/python3)");
}

// Siblings: a.onnx and b.onnx read shared.data; re-laying it out for a.onnx would give
// b.onnx wrong bytes, so it needs consent that names b.onnx.
void TestMultiUser::siblingSharingDataFileNeedsConsent()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // shared.data: a0 @0, b0 @3000, a1 @7000, densely packed.
    DataFileBuilder data("shared.data");
    std::map<std::string, std::string> aBytes{
        {"a0", tensorContent(1, 3000)}, {"a1", tensorContent(2, 5000)}, {"a_small", "tiny"}};
    onnx::ModelProto a = emptyModel(), b = emptyModel();
    auto* a0 = a.mutable_graph()->add_initializer();
    *a0 = rawTensor("a0", 2, {3000}, aBytes["a0"]);
    auto* b0 = b.mutable_graph()->add_initializer();
    *b0 = rawTensor("b0", 2, {4000}, tensorContent(3, 4000));
    auto* a1 = a.mutable_graph()->add_initializer();
    *a1 = rawTensor("a1", 2, {5000}, aBytes["a1"]);
    *a.mutable_graph()->add_initializer() = rawTensor("a_small", 2, {4}, aBytes["a_small"]);
    data.externalize(*a0, 0);
    data.externalize(*b0, 3000);
    data.externalize(*a1, 7000);
    QVERIFY(data.save(dir.path()));
    QVERIFY(saveModel(a, dir.filePath("a.onnx")) && saveModel(b, dir.filePath("b.onnx")));
    const auto before = hashFolder(dir.path());
    const QStringList args{"repack", "a.onnx", "-o", "a.onnx", "--data", "shared.data", "--align",
        "4096", "--align-threshold", "1KiB"};

    const Run refused = runCli(dir.path(), args);
    QVERIFY2(refused.exitCode == 3, qPrintable(refused.all())); // needs --force
    QVERIFY2(refused.err.contains("b.onnx"), refused.err.constData());
    QCOMPARE(hashFolder(dir.path()), before);
    QCOMPARE(saveTempsIn(dir.path()), QStringList());

    const Run forced = runCli(dir.path(), args + QStringList{"--force"});
    QVERIFY2(forced.exitCode == 0, qPrintable(forced.all()));
    PYTHON_LOADS(dir.filePath("a.onnx"), hashesOf(aBytes), "a.onnx after the forced save");
    QCOMPARE(saveTempsIn(dir.path()), QStringList());
}

// A data name equal to a model file or to a folder is refused before anything
// is written, whatever the consent.
void TestMultiUser::dataNameAliasingIsRefused_data()
{
    QTest::addColumn<QStringList>("args"); // after "repack m.onnx"
    QTest::newRow("save as, data named like the output model")
        << QStringList{"-o", "m6.onnx", "--data", "m6.onnx"};
    QTest::newRow("save as, data named like the output model, forced")
        << QStringList{"-o", "m6.onnx", "--data", "m6.onnx", "--force"};
    QTest::newRow("in place, data named like the model, forced")
        << QStringList{"-o", "m.onnx", "--data", "m.onnx", "--force"};
    QTest::newRow("save as, data named like the input model, forced")
        << QStringList{"-o", "n.onnx", "--data", "m.onnx", "--force"};
    QTest::newRow("in place, data is the folder '.'")
        << QStringList{"-o", "m.onnx", "--data", ".", "--force"};
    QTest::newRow("in place, data is 'sub/..'")
        << QStringList{"-o", "m.onnx", "--data", "sub/..", "--force"};
    QTest::newRow("in place, data is a subfolder")
        << QStringList{"-o", "m.onnx", "--data", "sub", "--force"};
    QTest::newRow("save as, data is the folder '.'") << QStringList{"-o", "n.onnx", "--data", "."};
}

void TestMultiUser::dataNameAliasingIsRefused()
{
    QFETCH(QStringList, args);
    QTemporaryDir dir;
    QVERIFY(dir.isValid() && QDir(dir.path()).mkdir("sub"));
    QVERIFY(!writeModel(dir.path()).isEmpty());
    const auto before = hashFolder(dir.path());

    const Run run = runCli(dir.path(), QStringList{"repack", "m.onnx"} + args);
    QVERIFY2(run.exitCode == 1 || run.exitCode == 2,
        qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.all())));
    QCOMPARE(hashFolder(dir.path()), before); // m6.onnx, n.onnx not written either
    QCOMPARE(saveTempsIn(dir.path()), QStringList());
    QCOMPARE(
        QDir(dir.filePath("sub")).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
        QStringList());
    PYTHON_LOADS(dir.filePath("m.onnx"), hashesOf(uint8Bytes(kSizes)), "m.onnx");
}

// OUT is the input's own data file; writing it breaks the input.
void TestMultiUser::outputOverInputsDataFileNeedsConsent()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(!writeModel(dir.path(), "m.data").isEmpty());
    const auto before = hashFolder(dir.path());

    const Run run = runCli(dir.path(), {"repack", "m.onnx", "-o", "m.data"});
    QVERIFY2(run.exitCode == 3, qPrintable(run.all())); // needs --force
    QVERIFY2(run.err.contains("m.onnx"), run.err.constData());
    QCOMPARE(hashFolder(dir.path()), before);
    QCOMPARE(saveTempsIn(dir.path()), QStringList());
    PYTHON_LOADS(dir.filePath("m.onnx"), hashesOf(uint8Bytes(kSizes)), "m.onnx");
}

// A damaged input: t2's checksum key does not match its bytes. Repacking must not erase that
// evidence (drop the key, or recompute it over the corrupt bytes).
namespace {
const std::string kWrongChecksum = "0123456789abcdef0123456789abcdef01234567";

std::map<std::string, std::string> writeChecksummedModel(const QString& dir)
{
    std::map<std::string, std::string> bytes;
    onnx::ModelProto model = emptyModel();
    DataFileBuilder data("m.onnx.data");
    const std::vector<uint64_t> sizes{100, 2000, 3000, 5000};
    for (size_t i = 0; i < sizes.size(); ++i) {
        bytes[tensorName(i)] = tensorContent(i, sizes[i]);
        auto* t = model.mutable_graph()->add_initializer();
        *t = rawTensor(tensorName(i), 2, {int64_t(sizes[i])}, bytes[tensorName(i)]);
        if (sizes[i] < 1024)
            continue;
        data.append(*t);
        addExternalKey(*t, "checksum", i == 2 ? kWrongChecksum : sha1Hex(bytes[tensorName(i)]));
    }
    if (!data.save(dir) || !saveModel(model, QDir(dir).filePath("m.onnx")))
        return {};
    return bytes;
}
} // namespace

void TestMultiUser::corruptChecksumIsNotCarriedSilently_data()
{
    QTest::addColumn<QStringList>("args"); // after "repack m.onnx"
    QTest::addColumn<bool>("allowed"); // --allow-corrupt: carried, with the old checksum
    QTest::newRow("save as") << QStringList{"-o", "out.onnx"} << false;
    QTest::newRow("in place") << QStringList{"-o", "m.onnx", "--align", "0"} << false;
    QTest::newRow("save as, --checksum") << QStringList{"-o", "out.onnx", "--checksum"} << false;
    QTest::newRow("save as, --allow-corrupt")
        << QStringList{"-o", "out.onnx", "--allow-corrupt"} << true;
    QTest::newRow("save as, --allow-corrupt --checksum")
        << QStringList{"-o", "out.onnx", "--allow-corrupt", "--checksum"} << true;
}

void TestMultiUser::corruptChecksumIsNotCarriedSilently()
{
    QFETCH(QStringList, args);
    QFETCH(bool, allowed);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto bytes = writeChecksummedModel(dir.path());
    QVERIFY(!bytes.empty());
    const auto before = hashFolder(dir.path());

    const Run run = runCli(dir.path(), QStringList{"repack", "m.onnx"} + args);
    if (!allowed) {
        QVERIFY2(run.exitCode == 1, qPrintable(run.all()));
        QVERIFY2(run.err.contains("t2"), run.err.constData());
        QCOMPARE(hashFolder(dir.path()), before);
        QCOMPARE(saveTempsIn(dir.path()), QStringList());
        return;
    }
    QVERIFY2(run.exitCode == 0, qPrintable(run.all()));
    const QString out = dir.filePath("out.onnx");
    PYTHON_LOADS(out, hashesOf(bytes), "the output"); // the bytes carried as they were
    const auto proto = readProto(out);
    QVERIFY(proto);
    const onnx::TensorProto* t2 = findInitializer(*proto, "t2");
    QVERIFY(t2);
    QCOMPARE(externalKey(*t2, "checksum"), kWrongChecksum); // the evidence, not a new checksum
    if (args.contains("--checksum")) {
        const onnx::TensorProto* t3 = findInitializer(*proto, "t3");
        QVERIFY(t3);
        QCOMPARE(externalKey(*t3, "checksum"), sha1Hex(bytes.at("t3")));
    }
}

// Inline: "bad" is a float[10] whose raw_data holds 39 bytes.
void TestMultiUser::inlineSizeMismatchIsNotCarriedSilently_data()
{
    QTest::addColumn<bool>("allowed");
    QTest::newRow("refused") << false;
    QTest::newRow("--allow-corrupt carries it") << true;
}

void TestMultiUser::inlineSizeMismatchIsNotCarriedSilently()
{
    QFETCH(bool, allowed);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string badBytes = tensorContent(5, 39);
    onnx::ModelProto model = emptyModel();
    *model.mutable_graph()->add_initializer() = rawTensor("bad", 1, {10}, badBytes);
    *model.mutable_graph()->add_initializer()
        = rawTensor("good", 2, {3000}, tensorContent(6, 3000));
    QVERIFY(saveModel(model, dir.filePath("m.onnx")));
    const auto before = hashFolder(dir.path());

    QStringList args{"repack", "m.onnx", "-o", "out.onnx"};
    if (allowed)
        args << "--allow-corrupt";
    const Run run = runCli(dir.path(), args);
    if (!allowed) {
        QVERIFY2(run.exitCode == 1, qPrintable(run.all()));
        QVERIFY2(run.err.contains("bad"), run.err.constData());
        QCOMPARE(hashFolder(dir.path()), before);
        return;
    }
    QVERIFY2(run.exitCode == 0, qPrintable(run.all()));
    const auto proto = readProto(dir.filePath("out.onnx"));
    QVERIFY(proto);
    const onnx::TensorProto* bad = findInitializer(*proto, "bad");
    QVERIFY(bad);
    QCOMPARE(bad->raw_data(), badBytes);
}

// Alignment is 0 or a power of two up to 16 MiB.
void TestMultiUser::invalidAlignmentIsRefused_data()
{
    QTest::addColumn<QString>("output");
    QTest::addColumn<QString>("align");
    QTest::newRow("3") << "out.onnx"
                       << "3";
    QTest::newRow("24") << "out.onnx"
                        << "24";
    QTest::newRow("1GiB") << "out.onnx"
                          << "1GiB";
    QTest::newRow("32MiB") << "out.onnx"
                           << "32MiB";
    QTest::newRow("3, in place") << "m.onnx"
                                 << "3";
}

void TestMultiUser::invalidAlignmentIsRefused()
{
    QFETCH(QString, output);
    QFETCH(QString, align);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(!writeModel(dir.path()).isEmpty());
    const auto before = hashFolder(dir.path());

    const Run run = runCli(dir.path(), {"repack", "m.onnx", "-o", output, "--align", align});
    QVERIFY2(run.exitCode == 2, qPrintable(run.all()));
    QCOMPARE(hashFolder(dir.path()), before);
}

// A Hugging Face cache, snapshots/<rev>/ holding relative symlinks into blobs/.
// Reading follows them; writing replaces the links at the destination and never changes a blob.
void TestMultiUser::huggingFaceCacheBlobsStayIntact_data()
{
    QTest::addColumn<QString>("output"); // relative to the cache
    QTest::newRow("in place") << "snapshots/rev/m.onnx";
    QTest::newRow("to a new folder") << "out/m.onnx";
}

void TestMultiUser::huggingFaceCacheBlobsStayIntact()
{
    QFETCH(QString, output);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString cache = tmp.filePath("cache");
    QVERIFY(QDir().mkpath(cache + "/blobs") && QDir().mkpath(cache + "/snapshots/rev")
        && QDir().mkpath(cache + "/snapshots/old") && QDir().mkpath(cache + "/out")
        && QDir().mkpath(tmp.filePath("build")));
    QVERIFY(!writeModel(tmp.filePath("build")).isEmpty());
    QVERIFY(QFile::rename(tmp.filePath("build/m.onnx"), cache + "/blobs/A"));
    QVERIFY(QFile::rename(tmp.filePath("build/m.onnx.data"), cache + "/blobs/B"));
    for (const QString rev : {"rev", "old"}) { // two snapshots share the blobs
        QVERIFY(QFile::link("../../blobs/A", cache + "/snapshots/" + rev + "/m.onnx"));
        QVERIFY(QFile::link("../../blobs/B", cache + "/snapshots/" + rev + "/m.onnx.data"));
    }
    const auto blobs = hashFolder(cache + "/blobs");
    const ValueHashes values = hashesOf(uint8Bytes(kSizes));

    const Run verified = runCli(cache, {"verify", "snapshots/rev/m.onnx"});
    QVERIFY2(verified.exitCode == 0, qPrintable(verified.all()));
    const Run run = runCli(cache, {"repack", "snapshots/rev/m.onnx", "-o", output});
    QVERIFY2(run.exitCode == 0, qPrintable(run.all()));

    QCOMPARE(hashFolder(cache + "/blobs"), blobs);
    const QString saved = QDir(cache).filePath(output);
    PYTHON_LOADS(saved, values, "the saved model");
    CORE_LOADS(saved, uint8Bytes(kSizes));
    for (const QString name : {"m.onnx", "m.onnx.data"}) {
        const QFileInfo info(QFileInfo(saved).dir().filePath(name));
        QVERIFY2(info.exists() && !info.isSymLink(),
            qPrintable(info.filePath() + " should be a regular file"));
    }
    PYTHON_LOADS(cache + "/snapshots/old/m.onnx", values, "the other snapshot");
    QVERIFY(QFileInfo(cache + "/snapshots/old/m.onnx.data").isSymLink());
    QCOMPARE(saveTempsIn(QFileInfo(saved).path()), QStringList());
    QCOMPARE(saveTempsIn(cache + "/blobs"), QStringList());
}

// SPEC 5a "one save at a time": four in-place saves of one model with four
// layouts, started together, 20 times. Each waits for the others or fails clearly; none
// crashes, none deletes another's live temporaries; the model always loads with its values.
void TestMultiUser::concurrentInPlaceSaves()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::vector<uint64_t> sizes{100, 2000, MiB + 5, 700000, 3000, 3 * MiB / 2, 40000};
    QVERIFY(!writeUint8Model(dir.path(), "m.onnx", sizes, 1024, "m.onnx.data").isEmpty());
    const auto bytes = uint8Bytes(sizes);
    const ValueHashes values = hashesOf(bytes);
    const QString model = dir.filePath("m.onnx");
    const QStringList common{"repack", "m.onnx", "-o", "m.onnx", "--force", "--wait", "120"};
    const std::array<QStringList, 4> layouts{QStringList{"--align", "0"},
        QStringList{"--align", "4096", "--align-threshold", "1KiB"},
        QStringList{"--threshold", "4096", "--order", "size"}, QStringList{"--data", "other.data"}};

    int succeeded = 0, refused = 0;
    for (int round = 0; round < 20; ++round) {
        std::array<std::unique_ptr<QProcess>, 4> processes;
        for (size_t k = 0; k < processes.size(); ++k) {
            processes[k] = std::make_unique<QProcess>();
            processes[k]->setWorkingDirectory(dir.path());
            processes[k]->start(qEnvironmentVariable("REPACK_CLI"), common + layouts[k]);
        }
        for (const auto& p : processes)
            QVERIFY2(p->waitForStarted(), qPrintable(p->errorString()));
        int roundSucceeded = 0;
        QString outcomes; // for a failure message: who saved, who failed and why
        for (size_t k = 0; k < processes.size(); ++k) {
            QProcess& p = *processes[k];
            QVERIFY(p.waitForFinished(180000));
            const QString what = QStringLiteral("round %1, save %2 (%3): ")
                                     .arg(round)
                                     .arg(k)
                                     .arg(layouts[k].join(' '));
            const QString err = QString::fromUtf8(p.readAllStandardError());
            QVERIFY2(p.exitStatus() == QProcess::NormalExit, qPrintable(what + "crashed " + err));
            QVERIFY2(p.exitCode() == 0 || (p.exitCode() == 1 && !err.trimmed().isEmpty()),
                qPrintable(what + QStringLiteral("exit %1 ").arg(p.exitCode()) + err));
            (p.exitCode() == 0 ? roundSucceeded : refused)++;
            outcomes += what + QStringLiteral("exit %1 ").arg(p.exitCode())
                + err.section('\n', 0, 0) + '\n';
        }
        succeeded += roundSucceeded;
        QVERIFY2(roundSucceeded > 0,
            qPrintable(QStringLiteral("round %1: every save failed\n%2").arg(round).arg(outcomes)));
        const std::string problems = coreProblems(model, bytes);
        QVERIFY2(problems.empty(),
            qPrintable(QStringLiteral("round %1: %2%3")
                           .arg(round)
                           .arg(QString::fromStdString(problems), outcomes)));
        QVERIFY_PYTHON_LOADS(kValuesScript, model, values, QStringLiteral("round %1").arg(round));
        const QStringList temps = saveTempsIn(dir.path());
        QVERIFY2(temps.isEmpty(),
            qPrintable(QStringLiteral("round %1 left %2").arg(round).arg(temps.join(", "))));
    }
    qInfo("concurrent saves: %d succeeded, %d failed cleanly", succeeded, refused);
}

// Two saves of one model with different options, both loaded while a third party holds the
// folder's lock: the one that gets the lock second finds the model changed underneath, reads
// it again and applies its own options to the new model, instead of failing with "changed since
// the model was opened". Both succeed, and the model ends laid out as that save asked
// (re-running it changes nothing).
void TestMultiUser::waitingSaveAppliesItsOptionsToTheNewModel()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::vector<uint64_t> sizes{100, 4 * MiB, 3000, 4 * MiB + 7, 40000, 2 * MiB};
    const ValueHashes values = hashesOf(uint8Bytes(sizes));
    const QStringList common{"repack", "m.onnx", "-o", "m.onnx", "--wait", "120"};
    const std::array<QStringList, 2> options{
        QStringList{"--align", "0"}, QStringList{"--align", "64KiB", "--order", "size"}};
    for (int round = 0; round < 3; ++round) {
        // A layout neither save asks for, so each has work to do.
        QVERIFY(!writeUint8Model(dir.path(), "m.onnx", sizes, 1024, "m.onnx.data").isEmpty());
        auto held = repack::FolderLock::acquire({dir.path().toStdString()}, 0);
        QVERIFY(held);
        std::array<std::unique_ptr<QProcess>, 2> saves;
        for (size_t k = 0; k < saves.size(); ++k) {
            saves[k] = std::make_unique<QProcess>();
            saves[k]->setWorkingDirectory(dir.path());
            saves[k]->start(qEnvironmentVariable("REPACK_CLI"), common + options[k]);
            QVERIFY(saves[k]->waitForStarted());
        }
        // Both load the model (milliseconds) and wait for the lock; then it is let go.
        QTest::qWait(1500);
        held = repack::FolderLock();
        std::array<QString, 2> err;
        int reloaded = 0, last = -1; // the save that committed last
        for (size_t k = 0; k < saves.size(); ++k) {
            QVERIFY(saves[k]->waitForFinished(180000));
            err[k] = QString::fromUtf8(saves[k]->readAllStandardError());
            QVERIFY2(saves[k]->exitStatus() == QProcess::NormalExit && saves[k]->exitCode() == 0,
                qPrintable(QStringLiteral("round %1, save %2: %3").arg(round).arg(k).arg(err[k])));
            if (err[k].contains("changed by another save meanwhile")) {
                ++reloaded;
                last = int(k);
            }
        }
        QVERIFY2(reloaded == 1,
            qPrintable(err[0] + "\n" + err[1] + "\n" + saves[0]->readAllStandardOutput() + "\n"
                + saves[1]->readAllStandardOutput()));
        const Run again = runCli(dir.path(), common + options[size_t(last)]);
        QVERIFY2(again.exitCode == 0 && again.out.startsWith("nothing to change"),
            qPrintable(QStringLiteral("round %1: the layout is not save %2's: %3")
                           .arg(round)
                           .arg(last)
                           .arg(again.all())));
        QVERIFY_PYTHON_LOADS(
            kValuesScript, dir.filePath("m.onnx"), values, QStringLiteral("round %1").arg(round));
        QCOMPARE(saveTempsIn(dir.path()), QStringList());
    }
}

// Real ENOSPC on a small tmpfs: a save that needs more space than is free changes nothing.
void TestMultiUser::diskFullOnTmpfsChangesNothing_data()
{
    QTest::addColumn<QString>("output");
    QTest::newRow("in place") << "m.onnx";
    QTest::newRow("save as beside it") << "copy.onnx";
}

void TestMultiUser::diskFullOnTmpfsChangesNothing()
{
    QFETCH(QString, output);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString fs = tmp.filePath("fs");
    QVERIFY(QDir().mkpath(fs));
    const TmpfsMount mount(fs, QStringLiteral("8m"));
    if (!mount.mounted())
        QSKIP("mount -t tmpfs was refused (needs root or CAP_SYS_ADMIN, not granted in this "
              "container): real ENOSPC is not tested here");
    // 5 MiB of external data on an 8 MiB file system: a second copy does not fit.
    const std::vector<uint64_t> sizes{100, 2000, 5 * MiB, 3000};
    QVERIFY(!writeUint8Model(fs, "m.onnx", sizes, 1024, "m.onnx.data").isEmpty());
    const auto before = hashFolder(fs);

    const Run run = runCli(fs, {"repack", "m.onnx", "-o", output, "--align", "0"});
    QVERIFY2(run.exitCode == 1, qPrintable(run.all()));
    QCOMPARE(hashFolder(fs), before);
    QCOMPARE(saveTempsIn(fs), QStringList());
    PYTHON_LOADS(fs + "/m.onnx", hashesOf(uint8Bytes(sizes)), "m.onnx");
}

// SPEC 5a limits: 1500 source files (one per tensor) consolidated under an open-file limit of
// 256, soft and hard, as `ulimit -n 256` sets it.
void TestMultiUser::manySourceFilesUnderOpenFileLimit_data()
{
    QTest::addColumn<QString>("output");
    QTest::newRow("in place") << "m.onnx";
    QTest::newRow("to a new folder") << "out/m.onnx";
}

void TestMultiUser::manySourceFilesUnderOpenFileLimit()
{
    QFETCH(QString, output);
    QTemporaryDir dir;
    QVERIFY(dir.isValid() && QDir(dir.path()).mkdir("out"));
    constexpr size_t count = 1500;
    onnx::ModelProto model = emptyModel();
    std::map<std::string, std::string> bytes;
    for (size_t i = 0; i < count; ++i) {
        const uint64_t size = 1024 + i % 97;
        bytes[tensorName(i)] = tensorContent(i, size);
        auto* t = model.mutable_graph()->add_initializer();
        *t = rawTensor(tensorName(i), 2, {int64_t(size)}, bytes[tensorName(i)]);
        DataFileBuilder data(tensorName(i) + ".bin");
        data.append(*t);
        QVERIFY(data.save(dir.path()));
    }
    QVERIFY(saveModel(model, dir.filePath("m.onnx")));

    const Run run = runCli(dir.path(), {"repack", "m.onnx", "-o", output}, [] {
        const rlimit limit{256, 256};
        ::setrlimit(RLIMIT_NOFILE, &limit);
    });
    QVERIFY2(run.exitCode == 0, qPrintable(run.all()));
    PYTHON_LOADS(dir.filePath(output), hashesOf(bytes), "the consolidated model");
    CORE_LOADS(dir.filePath(output), bytes);
}

// SPEC 5a limits: a tensor past 4 GiB of a sparse data file (no real 4 GiB written).
void TestMultiUser::offsetPast4GiB()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid() && QDir(dir.path()).mkdir("out"));
    const uint64_t highOffset = 4 * GiB + 12345;
    std::map<std::string, std::string> bytes{
        {"low", tensorContent(1, 5000)}, {"high", tensorContent(2, 6000)}};
    onnx::ModelProto model = emptyModel();
    for (const auto& [name, offset] :
        std::vector<std::pair<std::string, uint64_t>>{{"low", 0}, {"high", highOffset}}) {
        auto* t = model.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(2);
        t->add_dims(int64_t(bytes[name].size()));
        setExternal(*t, "big.data", std::to_string(offset), std::to_string(bytes[name].size()));
    }
    const int fd
        = ::open(QFile::encodeName(dir.filePath("big.data")).constData(), O_CREAT | O_WRONLY, 0644);
    QVERIFY(fd >= 0);
    const bool written = ::ftruncate(fd, off_t(highOffset + 64 * KiB)) == 0
        && ::pwrite(fd, bytes["low"].data(), bytes["low"].size(), 0) == ssize_t(bytes["low"].size())
        && ::pwrite(fd, bytes["high"].data(), bytes["high"].size(), off_t(highOffset))
            == ssize_t(bytes["high"].size());
    ::close(fd);
    QVERIFY(written);
    QVERIFY(saveModel(model, dir.filePath("m.onnx")));
    CORE_LOADS(dir.filePath("m.onnx"), bytes);

    const Run run = runCli(dir.path(), {"repack", "m.onnx", "-o", "out/m.onnx"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.all()));
    PYTHON_LOADS(dir.filePath("out/m.onnx"), hashesOf(bytes), "the repacked model");
    CORE_LOADS(dir.filePath("out/m.onnx"), bytes);
}

// SPEC 5a housekeeping: an in-place save that stops using old.data says so; --remove-unused
// deletes it unless another model in the folder reads it.
void TestMultiUser::dataFileNoLongerUsed_data()
{
    QTest::addColumn<bool>("removeUnused");
    QTest::addColumn<bool>("sibling"); // other.onnx also reads old.data
    QTest::addColumn<bool>("removed");
    QTest::newRow("reported and kept") << false << false << false;
    QTest::newRow("--remove-unused removes it") << true << false << true;
    QTest::newRow("--remove-unused keeps what a sibling reads") << true << true << false;
}

void TestMultiUser::dataFileNoLongerUsed()
{
    QFETCH(bool, removeUnused);
    QFETCH(bool, sibling);
    QFETCH(bool, removed);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(!writeModel(dir.path(), "old.data").isEmpty());
    if (sibling)
        QVERIFY(QFile::copy(dir.filePath("m.onnx"), dir.filePath("other.onnx")));
    const QByteArray oldData = fileContents(dir.filePath("old.data"));
    const ValueHashes values = hashesOf(uint8Bytes(kSizes));

    QStringList args{"repack", "m.onnx", "-o", "m.onnx", "--data", "new.data"};
    if (removeUnused)
        args << "--remove-unused";
    const Run run = runCli(dir.path(), args);
    QVERIFY2(run.exitCode == 0, qPrintable(run.all()));
    QVERIFY2(run.out.contains("old.data"), run.out.constData());
    PYTHON_LOADS(dir.filePath("m.onnx"), values, "m.onnx");
    if (removed) {
        QVERIFY(!QFile::exists(dir.filePath("old.data")));
    } else {
        QCOMPARE(fileContents(dir.filePath("old.data")), oldData);
    }
    if (sibling)
        PYTHON_LOADS(dir.filePath("other.onnx"), values, "other.onnx");
}

// Could not tell means keep: other.onnx, which reads old.data too, cannot be read by the user
// saving (mode 000; root drops to nobody for the run). --remove-unused keeps old.data and says
// which model it could not read; replacing old.data needs consent that names it.
void TestMultiUser::unreadableSiblingMeansKeep_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::newRow("--remove-unused keeps it")
        << QStringList{"-o", "m.onnx", "--data", "new.data", "--remove-unused"} << 0;
    QTest::newRow("replacing it needs consent")
        << QStringList{"-o", "m.onnx", "--data", "old.data", "--align", "0"} << 3;
}

void TestMultiUser::unreadableSiblingMeansKeep()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(!writeModel(dir.path(), "old.data").isEmpty());
    QVERIFY(QFile::copy(dir.filePath("m.onnx"), dir.filePath("other.onnx")));
    const bool root = ::geteuid() == 0;
    // The saving user must write the folder and read m.onnx and old.data, not other.onnx.
    QVERIFY(::chmod(dir.path().toLocal8Bit().constData(), 0777) == 0);
    for (const char* name : {"m.onnx", "old.data"})
        QVERIFY(::chmod(dir.filePath(name).toLocal8Bit().constData(), 0666) == 0);
    QVERIFY(::chmod(dir.filePath("other.onnx").toLocal8Bit().constData(), 0) == 0);
    const QByteArray oldData = fileContents(dir.filePath("old.data"));

    const Run run = runCli(dir.path(), QStringList{"repack", "m.onnx"} + args, [root] {
        if (root && (::setgid(65534) != 0 || ::setuid(65534) != 0))
            ::_exit(99);
    });
    QVERIFY2(run.exitCode == exitCode, qPrintable(run.all()));
    QVERIFY2(run.err.contains("other.onnx") && run.err.contains("could not be read"),
        run.err.constData());
    QCOMPARE(fileContents(dir.filePath("old.data")), oldData);
    QVERIFY(::chmod(dir.filePath("other.onnx").toLocal8Bit().constData(), 0644) == 0);
    PYTHON_LOADS(dir.filePath("other.onnx"), hashesOf(uint8Bytes(kSizes)), "other.onnx");
}

// A folder the user may write but not list (mode -wx): no lock can be taken on it and no
// sibling found, so a save there is refused with the reason, writing nothing; inspect says
// what it could not check.
void TestMultiUser::folderThatCannotBeListedIsRefused()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(!writeModel(dir.path(), "old.data").isEmpty());
    for (const char* name : {"m.onnx", "old.data"})
        QVERIFY(::chmod(dir.filePath(name).toLocal8Bit().constData(), 0666) == 0);
    const bool root = ::geteuid() == 0;
    auto asUser = [root] {
        if (root && (::setgid(65534) != 0 || ::setuid(65534) != 0))
            ::_exit(99);
    };
    const auto before = hashFolder(dir.path());
    QVERIFY(::chmod(dir.path().toLocal8Bit().constData(), 0333) == 0);
    const Run save
        = runCli(dir.path(), {"repack", "m.onnx", "-o", "m.onnx", "--align", "0"}, asUser);
    const Run inspect = runCli(dir.path(), {"inspect", "m.onnx"}, asUser);
    QVERIFY(::chmod(dir.path().toLocal8Bit().constData(), 0755) == 0);
    QVERIFY2(save.exitCode == 1, qPrintable(save.all()));
    QVERIFY2(save.err.contains("may be written but not read"), save.err.constData());
    QCOMPARE(hashFolder(dir.path()), before);
    QVERIFY2(inspect.exitCode == 0 && inspect.out.contains("unreadable-sibling"),
        qPrintable(inspect.all()));
}

// SPEC 5a: replaced files keep their permission bits.
void TestMultiUser::replacedFilesKeepPermissionBits_data()
{
    QTest::addColumn<QString>("file");
    QTest::newRow("data file 0640") << "m.onnx.data";
    QTest::newRow("model file 0640") << "m.onnx";
}

void TestMultiUser::replacedFilesKeepPermissionBits()
{
    QFETCH(QString, file);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(!writeModel(dir.path()).isEmpty());
    const QString path = dir.filePath(file);
    QCOMPARE(::chmod(QFile::encodeName(path).constData(), 0640), 0);
    const QByteArray oldData = fileContents(dir.filePath("m.onnx.data"));

    const Run run = runCli(dir.path(), {"repack", "m.onnx", "-o", "m.onnx"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.all()));
    QVERIFY(fileContents(dir.filePath("m.onnx.data")) != oldData); // really replaced
    QCOMPARE(QString::number(modeOf(path), 8), QStringLiteral("640"));
}

// SPEC 5a: a data file with a second hard link; the save replaces the name, the other link
// keeps the old content.
void TestMultiUser::otherHardLinkKeepsItsBytes()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(!writeModel(dir.path()).isEmpty());
    QCOMPARE(::link(QFile::encodeName(dir.filePath("m.onnx.data")).constData(),
                 QFile::encodeName(dir.filePath("backup.data")).constData()),
        0);
    const QByteArray oldData = fileContents(dir.filePath("backup.data"));

    const Run run = runCli(dir.path(), {"repack", "m.onnx", "-o", "m.onnx"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.all()));
    QCOMPARE(fileContents(dir.filePath("backup.data")), oldData);
    PYTHON_LOADS(dir.filePath("m.onnx"), hashesOf(uint8Bytes(kSizes)), "m.onnx");
    CORE_LOADS(dir.filePath("m.onnx"), uint8Bytes(kSizes));
}

QTEST_GUILESS_MAIN(TestMultiUser)
#include "tst_multi_user.moc"
