// What else lives in a model's folder (SPEC 5a): the siblings that read a data file (also
// through a symlink name), leftovers of dead saves (never a live save's, never one a model
// names), data files no model uses, hard-linked data; `clean` removes exactly the leftovers,
// and `inspect`/`verify` report all of it as warnings.
#include "core/file_names.h"
#include "core/inspect/folder_inspect.h"
#include "core/inspect/folder_listing.h"
#include "core/inspect/folder_scan.h"
#include "core/inspect/readers.h"
#include "core/model/model.h"
#include "core/save/clean.h"
#include "core/save_lock.h"
#include "tests/support/cli_run.h"
#include "tests/support/model_builder.h"
#include "tests/support/result_checks.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <set>
#include <unistd.h>

using namespace repack;
using namespace fixtures;
namespace fs = std::filesystem;

namespace {

const std::vector<uint64_t> kSizes{64, 2048}; // t1 external
constexpr uint64_t kExternalFrom = 1024;

// A save's temporary name for `finalName`, as core/save/temp_file.cpp makes them.
QString tempOf(const QString& finalName, const char* hex = "0123456789ab")
{
    return finalName + ".repack-tmp-" + hex;
}

bool writeFile(const QString& path, qsizetype bytes, char fill = 'x')
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(QByteArray(bytes, fill)) == bytes;
}

bool symlinkTo(const QString& target, const QString& link)
{
    return ::symlink(QFile::encodeName(target).constData(), QFile::encodeName(link).constData())
        == 0;
}

// `dir`/`modelName` reading `dataName`, which is not created here (it may be a symlink or a
// file another model wrote); the bytes match those writeUint8Model writes for `kSizes`.
bool writeModelReading(const QString& dir, const QString& modelName, const std::string& dataName)
{
    QTemporaryDir scratch;
    const QString built
        = writeUint8Model(scratch.path(), modelName, kSizes, kExternalFrom, dataName);
    return !built.isEmpty() && QFile::copy(built, QDir(dir).filePath(modelName));
}

QStringList fileNames(const std::vector<std::filesystem::path>& paths)
{
    QStringList out;
    for (const auto& p : paths)
        out << QString::fromStdString(p.filename().string());
    out.sort();
    return out;
}

QStringList fileNames(const std::vector<FolderEntry>& entries)
{
    QStringList out;
    for (const auto& e : entries)
        out << QString::fromStdString(e.path.filename().string());
    out.sort();
    return out;
}

// "name" relative to `dir` for entries in subfolders.
QStringList relativeNames(const QString& dir, const std::vector<FolderEntry>& entries)
{
    QStringList out;
    for (const auto& e : entries)
        out << QDir(dir).relativeFilePath(QString::fromStdString(e.path.string()));
    out.sort();
    return out;
}

using Run = fixtures::CliRun;
using fixtures::runCli;

// A folder as an interrupted life leaves it: model m with its data, a sibling s whose killed
// save left it naming a temporary, two temporaries of dead saves, an unused data file.
struct MessyFolder {
    QString model;
    QStringList leftovers;
    QStringList untouchable; // everything else
};

bool makeMessyFolder(const QString& dir, MessyFolder& out)
{
    out.model = writeUint8Model(dir, "m.onnx", kSizes, kExternalFrom, "m.onnx.data");
    const std::string sTemp = tempOf("s.onnx.data", "00000000beef").toStdString();
    if (out.model.isEmpty()
        || writeUint8Model(dir, "s.onnx", kSizes, kExternalFrom, sTemp).isEmpty())
        return false;
    out.leftovers = {tempOf("m.onnx.data"), tempOf("m.onnx", "abcdefabcdef")};
    for (const QString& name : out.leftovers)
        if (!writeFile(QDir(dir).filePath(name), 300))
            return false;
    if (!writeFile(QDir(dir).filePath("old.onnx.data"), 500))
        return false;
    out.untouchable = QDir(dir).entryList(QDir::Files | QDir::Hidden);
    for (const QString& name : out.leftovers)
        out.untouchable.removeAll(name);
    return true;
}

} // namespace

class TestFolderScan : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void readersOf_data();
    void readersOf();
    void readersAboveTheFile();
    void aModelNamedInCapitalsIsAModel();
    void oneRuleSaysWhatAFolderHolds();
    void siblingLocationsAreTheIndexs();
    void leftovers_data();
    void leftovers();
    void noLeftoversWhileASaveHoldsTheLock();
    void unusedData_data();
    void unusedData();
    void hardLinkedData();
    void housekeepingWarnings();
    void removeLeftoversRemovesExactlyTheLeftovers();
    void removeLeftoversRefusesWhileASaveRuns();
    void cliClean();
    void cliReportsWarnings_data();
    void cliReportsWarnings();

private:
    QTemporaryDir m_shared; // the folder readersOf scans
};

void TestFolderScan::initTestCase()
{
    QVERIFY(m_shared.isValid());
    const QString dir = m_shared.path();
    // a, b -> shared.data; d -> link.data -> shared.data; c -> c.data; e mentions shared.data in
    // its doc string but reads nothing; junk.onnx is no model; unused.data is read by no one.
    QVERIFY(!writeUint8Model(dir, "a.onnx", kSizes, kExternalFrom, "shared.data").isEmpty());
    QVERIFY(!writeUint8Model(dir, "b.onnx", kSizes, kExternalFrom, "shared.data").isEmpty());
    QVERIFY(!writeUint8Model(dir, "c.onnx", kSizes, kExternalFrom, "c.data").isEmpty());
    QVERIFY(writeModelReading(dir, "d.onnx", "link.data"));
    QVERIFY(symlinkTo("shared.data", QDir(dir).filePath("link.data")));
    onnx::ModelProto e = emptyModel();
    e.set_doc_string("weights moved out of shared.data and link.data");
    *e.mutable_graph()->add_initializer() = rawTensor("w", 2, {4}, patternBytes(4));
    QVERIFY(saveModel(e, QDir(dir).filePath("e.onnx")));
    QFile junk(QDir(dir).filePath("junk.onnx"));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write("\xff\xff\xff not a model, though it says shared.data and link.data\n");
    junk.close();
    QVERIFY(writeFile(QDir(dir).filePath("unused.data"), 10));
    // A copy of b under a temporary name is no model of the folder.
    QVERIFY(QFile::copy(QDir(dir).filePath("b.onnx"), QDir(dir).filePath(tempOf("b.onnx"))));
}

void TestFolderScan::readersOf_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QStringList>("exclude");
    QTest::addColumn<QStringList>("expected");

    QTest::addRow("siblings sharing the data file")
        << "shared.data" << QStringList{"a.onnx"} << QStringList{"b.onnx", "d.onnx"};
    QTest::addRow("no exclusion") << "shared.data" << QStringList{}
                                  << QStringList{"a.onnx", "b.onnx", "d.onnx"};
    QTest::addRow("excluded by another spelling of the path")
        << "shared.data" << QStringList{"./a.onnx", "sub/../b.onnx"} << QStringList{"d.onnx"};
    QTest::addRow("asked through the symlink name")
        << "link.data" << QStringList{"d.onnx"} << QStringList{"a.onnx", "b.onnx"};
    QTest::addRow("a file only one model reads")
        << "c.data" << QStringList{} << QStringList{"c.onnx"};
    QTest::addRow("a data file no model reads") << "unused.data" << QStringList{} << QStringList{};
    QTest::addRow("a file that does not exist") << "gone.data" << QStringList{} << QStringList{};
}

void TestFolderScan::readersOf()
{
    QFETCH(QString, file);
    QFETCH(QStringList, exclude);
    QFETCH(QStringList, expected);
    QDir().mkpath(m_shared.filePath("sub"));
    const std::filesystem::path dir = m_shared.path().toStdString();
    std::vector<std::filesystem::path> excluded;
    for (const QString& name : exclude)
        excluded.push_back(dir / name.toStdString());
    const auto found = repack::readersOf(dir / file.toStdString(), {{dir}, excluded});
    QCOMPARE(fileNames(found.all()), expected);
}

// A model reads files at or below its folder: the readers of weights/w.bin are looked for in
// weights/ and in every folder above it up to the roots of the search (the output folder, the
// folders of the models saved), never only beside the file (issue 35: a folder save removed a
// file a model one folder up still read).
void TestFolderScan::readersAboveTheFile()
{
    QTemporaryDir temp;
    const QString dir = temp.path();
    QVERIFY(QDir(dir).mkpath("weights/deep"));
    QVERIFY(!writeUint8Model(dir, "a.onnx", kSizes, kExternalFrom, "weights/deep/w.bin").isEmpty());
    QVERIFY(!writeUint8Model(dir + "/weights", "b.onnx", kSizes, kExternalFrom, "deep/w.bin")
                 .isEmpty());
    const std::filesystem::path folder = dir.toStdString();
    const std::filesystem::path file = folder / "weights/deep/w.bin";

    // Every folder from the file's up to the root is searched, whatever the roots: both.
    QCOMPARE(fileNames(repack::readersOf(file, {}).all()), QStringList({"a.onnx", "b.onnx"}));
    QCOMPARE(fileNames(repack::readersOf(file, {{folder / "weights"}, {}}).all()),
        QStringList({"a.onnx", "b.onnx"}));
    const auto folders = repack::readerFolders(file, {{folder}, {}});
    QVERIFY(folders.size() > 3);
    QCOMPARE(std::vector<std::filesystem::path>(folders.begin(), folders.begin() + 3),
        (std::vector<std::filesystem::path>{folder / "weights/deep", folder / "weights", folder}));
    QCOMPARE(folders.back(), std::filesystem::path("/"));
    // Excluded by path: the model saved under that name is no reader of its own file.
    QCOMPARE(fileNames(repack::readersOf(file, {{}, {folder / "a.onnx"}}).all()),
        QStringList({"b.onnx"}));
    // By name, a file read under another name (a hard link) has no reader; by identity it has.
    QVERIFY(
        ::link(file.c_str(), (folder / "weights/deep/w.bin.repack-tmp-0123456789ab").c_str()) == 0);
    const std::filesystem::path link = folder / "weights/deep/w.bin.repack-tmp-0123456789ab";
    QCOMPARE(fileNames(repack::readersOf(link, {{folder}, {}}).all()),
        QStringList({"a.onnx", "b.onnx"}));
    QCOMPARE(
        fileNames(repack::readersOf(link, {{folder}, {}}, ReadMatch::Name).all()), QStringList());
}

// "B.ONNX" (a model copied from Windows) reads shared data as much as "b.onnx": a save that
// would replace the file it reads must know it (one classifier: core/file_names.h).
void TestFolderScan::aModelNamedInCapitalsIsAModel()
{
    QTemporaryDir temp;
    const QString dir = temp.path();
    QVERIFY(!writeUint8Model(dir, "a.onnx", kSizes, kExternalFrom, "w.data").isEmpty());
    QVERIFY(!writeUint8Model(dir, "B.ONNX", kSizes, kExternalFrom, "w.data").isEmpty());
    const std::filesystem::path folder = dir.toStdString();
    const auto found = repack::readersOf(folder / "w.data", {{folder}, {folder / "a.onnx"}});
    QCOMPARE(fileNames(found.all()), QStringList{"B.ONNX"});

    QCOMPARE(classifyFileName("B.ONNX"), FileType::Model);
    QCOMPARE(classifyFileName("b.onnx"), FileType::Model);
    QCOMPARE(classifyFileName("b.onnx.data"), FileType::Data);
    QCOMPARE(classifyFileName(tempOf("b.onnx").toStdString()), FileType::Temp);
    QCOMPARE(classifyFileName("config.json"), FileType::Other);
}

// A sibling is asked only for the files it reads, without an index of it: the same paths the
// index resolves, from every place a tensor may be (subgraphs, attributes, sparse, functions),
// and not those whose external_data is ignored.
void TestFolderScan::siblingLocationsAreTheIndexs()
{
    QTemporaryDir dir;
    onnx::ModelProto model = emptyModel();
    auto external = [](const std::string& name, const std::string& location) {
        onnx::TensorProto t = rawTensor(name, onnx::TensorProto::UINT8, {4});
        t.clear_raw_data();
        setExternal(t, location, "0", "4");
        return t;
    };
    onnx::GraphProto& g = *model.mutable_graph();
    *g.add_initializer() = external("a", "a.bin");
    *g.add_initializer() = external("a2", "a.bin");
    onnx::TensorProto ignored = rawTensor("ignored", onnx::TensorProto::UINT8, {4});
    addExternalKey(ignored, "location", "ignored.bin"); // data_location stays DEFAULT
    *g.add_initializer() = ignored;
    onnx::SparseTensorProto sparse = sparseTensor("sv", "si", {10}, 2);
    *sparse.mutable_values() = external("sv", "sub/sparse.bin");
    *g.add_sparse_initializer() = sparse;
    onnx::NodeProto& node = addNode(g, "If", "if");
    onnx::GraphProto& branch = addSubgraph(node, "then_branch");
    addConstant(branch, "c", external("cv", "../outside.bin"));
    onnx::NodeProto& inFunction
        = addNode(*addFunction(model, "local", "f").mutable_node(), "Constant", "fc");
    auto* value = inFunction.add_attribute();
    value->set_name(std::string("value"));
    value->set_type(onnx::AttributeProto::TENSOR);
    *value->mutable_t() = external("fv", "./f.bin");
    *g.add_initializer() = external("absolute", "/etc/passwd");
    const QString path = dir.filePath("m.onnx");
    QVERIFY(saveModel(model, path));

    auto paths = externalDataPaths(path.toStdString());
    QVERIFY_OK(paths);
    std::set<std::filesystem::path> fromIndex;
    auto loaded = Model::load(path.toStdString());
    QVERIFY_OK(loaded);
    for (const TensorInfo& t : (*loaded)->tensors())
        if (t.isExternal() && std::filesystem::path(t.external->location()).is_relative())
            fromIndex.insert(
                (std::filesystem::path(dir.path().toStdString()) / t.external->location())
                    .lexically_normal());
    QCOMPARE(fromIndex.size(), size_t(4)); // a.bin, sub/sparse.bin, ../outside.bin, f.bin
    QCOMPARE(std::set<std::filesystem::path>(paths->begin(), paths->end()), fromIndex);
    QCOMPARE(paths->size(), fromIndex.size());

    QFile garbage(dir.filePath("garbage.onnx"));
    QVERIFY(garbage.open(QIODevice::WriteOnly) && garbage.write("\xff\xff\xff") == 3);
    garbage.close();
    auto none = externalDataPaths(dir.filePath("garbage.onnx").toStdString());
    QVERIFY(!none);
    QCOMPARE(none.error().kind, ErrorKind::Format);
}

void TestFolderScan::leftovers_data()
{
    QTest::addColumn<QString>("dataName"); // of model m.onnx
    QTest::addColumn<QStringList>("temps"); // written with 100 bytes each
    QTest::addColumn<QString>("sibling"); // s.onnx reading this, "" for none
    QTest::addColumn<QStringList>("expected");

    const QString data = "m.onnx.data";
    QTest::addRow("no temporaries") << data << QStringList{} << "" << QStringList{};
    QTest::addRow("a dead save's data and model temporaries")
        << data << QStringList{tempOf(data), tempOf("m.onnx")} << ""
        << QStringList{tempOf(data), tempOf("m.onnx")};
    QTest::addRow("temporaries of earlier versions start with a dot")
        << data << QStringList{"." + tempOf(data)} << "" << QStringList{"." + tempOf(data)};
    QTest::addRow("names that only look like temporaries")
        << data << QStringList{data + ".repack-tmp-XYZ", data + ".repack-tmp-0123"} << ""
        << QStringList{};
    QTest::addRow("the temporary the model names after an interrupted save")
        << tempOf(data) << QStringList{tempOf(data, "111111111111")} << ""
        << QStringList{tempOf(data, "111111111111")};
    QTest::addRow("the temporary a sibling names after an interrupted save")
        << data << QStringList{tempOf(data, "222222222222")} << tempOf("s.data")
        << QStringList{tempOf(data, "222222222222")};
    QTest::addRow("in the subfolder of the model's data")
        << "weights/w.bin" << QStringList{"weights/" + tempOf("w.bin"), tempOf(data)} << ""
        << QStringList{tempOf(data), "weights/" + tempOf("w.bin")};
}

void TestFolderScan::leftovers()
{
    QFETCH(QString, dataName);
    QFETCH(QStringList, temps);
    QFETCH(QString, sibling);
    QFETCH(QStringList, expected);
    QTemporaryDir dir;
    const QString path
        = writeUint8Model(dir.path(), "m.onnx", kSizes, kExternalFrom, dataName.toStdString());
    QVERIFY(!path.isEmpty());
    if (!sibling.isEmpty())
        QVERIFY(!writeUint8Model(dir.path(), "s.onnx", kSizes, kExternalFrom, sibling.toStdString())
                     .isEmpty());
    for (const QString& name : temps)
        QVERIFY(writeFile(dir.filePath(name), 100));
    auto model = loadModel(path);
    QVERIFY(model);
    const FolderReport report = scanFolder(*model);
    QCOMPARE(relativeNames(dir.path(), report.leftovers), expected);
    for (const auto& e : report.leftovers)
        QCOMPARE(e.bytes, uint64_t(100));
    QVERIFY(report.unusedData.empty()); // temporaries are not data files
}

void TestFolderScan::noLeftoversWhileASaveHoldsTheLock()
{
    QTemporaryDir dir;
    const QString path
        = writeUint8Model(dir.path(), "m.onnx", kSizes, kExternalFrom, "m.onnx.data");
    QVERIFY(writeFile(dir.filePath(tempOf("m.onnx.data")), 100));
    auto model = loadModel(path);
    QVERIFY(model);
    {
        auto lock = FolderLock::acquire({dir.path().toStdString()}, 0);
        QVERIFY(lock.ok());
        QVERIFY(scanFolder(*model).leftovers.empty());
    }
    QCOMPARE(fileNames(scanFolder(*model).leftovers), QStringList{tempOf("m.onnx.data")});
}

void TestFolderScan::unusedData_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("unused");

    for (const char* name :
        {"old.data", "m.onnx_data", "m.onnx.data.bak.data", "w.bin", "model.weights", "x.extdata",
            "m.onnx_data_3", "m.data_12", "encoder_data", "model-00002-of-00003.onnx.data",
            "model.onnx-00002-of-00003.data", "model-00001-of-00002.pb"})
        QTest::addRow("%s is reported", name) << name << true;
    for (const char* name : {"notes.txt", "config.json", "model-00001-of-00002.safetensors",
             "other.onnx", "m.onnx.data.bak", "weights-of-x"})
        QTest::addRow("%s is not a data file", name) << name << false;
}

void TestFolderScan::unusedData()
{
    QFETCH(QString, name);
    QFETCH(bool, unused);
    QTemporaryDir dir;
    const QString path
        = writeUint8Model(dir.path(), "m.onnx", kSizes, kExternalFrom, "m.onnx.data");
    QVERIFY(!writeUint8Model(dir.path(), "s.onnx", kSizes, kExternalFrom, "s.bin").isEmpty());
    QVERIFY(symlinkTo("m.onnx.data", dir.filePath("alias.data")));
    QVERIFY(writeFile(dir.filePath(name), 777));
    auto model = loadModel(path);
    QVERIFY(model);
    const FolderReport report = scanFolder(*model);
    // m.onnx.data (m's), s.bin (the sibling's) and alias.data (a name of m's) are in use.
    QCOMPARE(fileNames(report.unusedData), unused ? QStringList{name} : QStringList{});
    if (unused)
        QCOMPARE(report.unusedData.front().bytes, uint64_t(777));
    QVERIFY(report.leftovers.empty());
    QVERIFY(report.hardLinked.empty());
}

void TestFolderScan::hardLinkedData()
{
    QTemporaryDir dir;
    const QString path
        = writeUint8Model(dir.path(), "m.onnx", kSizes, kExternalFrom, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    QVERIFY(scanFolder(*model).hardLinked.empty());

    const QString data = dir.filePath("m.onnx.data");
    QVERIFY(::link(QFile::encodeName(data).constData(),
                QFile::encodeName(dir.filePath("backup.data")).constData())
        == 0);
    const FolderReport report = scanFolder(*model);
    QCOMPARE(fileNames(report.hardLinked), QStringList{"m.onnx.data"});
    QCOMPARE(report.hardLinked.front().bytes, uint64_t(QFileInfo(data).size()));
    QVERIFY(report.unusedData.empty()); // backup.data is the very file m reads
}

void TestFolderScan::housekeepingWarnings()
{
    QTemporaryDir dir;
    MessyFolder messy;
    QVERIFY(makeMessyFolder(dir.path(), messy));
    QVERIFY(::link(QFile::encodeName(dir.filePath("m.onnx.data")).constData(),
                QFile::encodeName(dir.filePath("backup.data")).constData())
        == 0);
    auto model = loadModel(messy.model);
    QVERIFY(model);
    QMap<QString, QStringList> byCode;
    for (const Problem& p : housekeepingProblems(*model)) {
        QCOMPARE(p.severity, Severity::Warning);
        QVERIFY(p.tensor.empty());
        byCode[QString::fromStdString(p.code)] << QString::fromStdString(p.message);
    }
    QCOMPARE(
        byCode.keys(), (QStringList{"hard-linked-data", "leftover-temporary", "unused-data-file"}));
    QCOMPARE(byCode["leftover-temporary"].size(), 2);
    for (const QString& m : byCode["leftover-temporary"])
        QVERIFY2(m.contains(".repack-tmp-") && m.contains("300 B")
                && m.contains("onnx-repack clean " + messy.model),
            qPrintable(m));
    QCOMPARE(byCode["unused-data-file"].size(), 1);
    QVERIFY2(byCode["unused-data-file"][0].contains(dir.filePath("old.onnx.data"))
            && byCode["unused-data-file"][0].contains("500 B"),
        qPrintable(byCode["unused-data-file"][0]));
    QCOMPARE(byCode["hard-linked-data"].size(), 1);
    QVERIFY2(byCode["hard-linked-data"][0].contains(dir.filePath("m.onnx.data")),
        qPrintable(byCode["hard-linked-data"][0]));
}

void TestFolderScan::removeLeftoversRemovesExactlyTheLeftovers()
{
    QTemporaryDir dir;
    MessyFolder messy;
    QVERIFY(makeMessyFolder(dir.path(), messy));
    const auto before = hashFolder(dir.path());

    auto removed = removeLeftovers(messy.model.toStdString());
    QVERIFY_OK(removed);
    QCOMPARE(fileNames(*removed), [&] {
        QStringList sorted = messy.leftovers;
        sorted.sort();
        return sorted;
    }());
    for (const auto& e : *removed)
        QCOMPARE(e.bytes, uint64_t(300));

    auto expected = before;
    for (const QString& name : messy.leftovers)
        expected.remove(name);
    QCOMPARE(hashFolder(dir.path()), expected);
    QCOMPARE(QStringList(expected.keys()), [&] {
        QStringList sorted = messy.untouchable;
        sorted.sort();
        return sorted;
    }());
    // The sibling that names its temporary still loads and reads its weights.
    auto sibling = loadModel(dir.filePath("s.onnx"));
    QVERIFY(sibling);
    QVERIFY(!sibling->hasErrors());
    QCOMPARE(readAllTensors(*sibling)["graph/t1"], tensorContent(1, kSizes[1]));

    auto again = removeLeftovers(messy.model.toStdString());
    QVERIFY(again.ok());
    QVERIFY(again->empty());
}

void TestFolderScan::removeLeftoversRefusesWhileASaveRuns()
{
    QTemporaryDir dir;
    MessyFolder messy;
    QVERIFY(makeMessyFolder(dir.path(), messy));
    const auto before = hashFolder(dir.path());
    {
        auto lock = FolderLock::acquire({dir.path().toStdString()}, 0);
        QVERIFY(lock.ok());
        auto removed = removeLeftovers(messy.model.toStdString());
        QVERIFY(!removed.ok());
        QVERIFY2(removed.error().message.find("another save is running") != std::string::npos,
            removed.error().message.c_str());
        QVERIFY(removed.error().is(ErrorKind::Busy)); // what a caller waits on, as a save's
        QCOMPARE(hashFolder(dir.path()), before);
    }
    // A folder that is not there is NotFound, for a lock as for a model.
    auto noFolder = FolderLock::acquire({dir.filePath("gone").toStdString()}, 0);
    QVERIFY(!noFolder.ok());
    QVERIFY(noFolder.error().is(ErrorKind::NotFound));
    auto missing = removeLeftovers(dir.filePath("missing.onnx").toStdString());
    QVERIFY(!missing.ok());
    QVERIFY2(missing.error().message.find("missing.onnx") != std::string::npos,
        missing.error().message.c_str());
    QCOMPARE(hashFolder(dir.path()), before);
}

void TestFolderScan::cliClean()
{
    QVERIFY2(QFileInfo(qEnvironmentVariable("REPACK_CLI")).isExecutable(),
        "REPACK_CLI must name the onnx-repack binary");
    QTemporaryDir dir;
    MessyFolder messy;
    QVERIFY(makeMessyFolder(dir.path(), messy));
    const auto before = hashFolder(dir.path());

    {
        auto lock = FolderLock::acquire({dir.path().toStdString()}, 0);
        QVERIFY(lock.ok());
        const Run busy = runCli({"clean", messy.model});
        QCOMPARE(busy.exitCode, 1);
        QVERIFY2(busy.err.contains("another save is running"), busy.err.constData());
        QCOMPARE(hashFolder(dir.path()), before);
    }
    const Run missing = runCli({"clean", dir.filePath("missing.onnx")});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY2(missing.err.contains("missing.onnx"), missing.err.constData());

    const Run run = runCli({"clean", messy.model});
    QCOMPARE(run.exitCode, 0);
    const QStringList lines = QString::fromUtf8(run.out).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    for (const QString& name : messy.leftovers)
        QVERIFY2(lines.filter(name).size() == 1 && lines.filter(name)[0].contains("300 B"),
            run.out.constData());
    QVERIFY2(lines[2].contains("2 leftover") && lines[2].contains("600 B"), run.out.constData());
    QCOMPARE(QStringList(hashFolder(dir.path()).keys()), [&] {
        QStringList sorted = messy.untouchable;
        sorted.sort();
        return sorted;
    }());

    const Run nothing = runCli({"clean", messy.model});
    QCOMPARE(nothing.exitCode, 0);
    QVERIFY2(!nothing.out.contains("removed"), nothing.out.constData());
}

void TestFolderScan::cliReportsWarnings_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QStringList>("codes"); // sorted
    const QStringList housekeeping{
        "hard-linked-data", "leftover-temporary", "leftover-temporary", "unused-data-file"};
    // inspect audits the storage too: writeUint8Model leaves 7 bytes no tensor reads before
    // each tensor of m.onnx.data.
    QTest::newRow("inspect --json")
        << "inspect"
        << QStringList{"hard-linked-data", "leftover-temporary", "leftover-temporary",
               "orphaned-bytes", "unused-data-file"};
    QTest::newRow("verify --json") << "verify" << housekeeping;
}

void TestFolderScan::cliReportsWarnings()
{
    QFETCH(QString, command);
    QFETCH(QStringList, codes);
    QTemporaryDir dir;
    MessyFolder messy;
    QVERIFY(makeMessyFolder(dir.path(), messy));
    QVERIFY(::link(QFile::encodeName(dir.filePath("m.onnx.data")).constData(),
                QFile::encodeName(dir.filePath("backup.data")).constData())
        == 0);

    const Run run = runCli({command, messy.model, "--json"});
    QCOMPARE(run.exitCode, 0); // warnings only
    const QJsonObject root = QJsonDocument::fromJson(run.out).object();
    QStringList found;
    for (const auto& value : root["problems"].toArray()) {
        const QJsonObject p = value.toObject();
        QCOMPARE(p["severity"].toString(), QString("warning"));
        found << p["code"].toString();
        if (p["code"].toString() == QLatin1String("unused-data-file"))
            QVERIFY2(p["message"].toString().contains("old.onnx.data")
                    && p["message"].toString().contains("500 B"),
                qPrintable(p["message"].toString()));
    }
    found.sort();
    QCOMPARE(found, codes);

    const Run text = runCli({command, messy.model});
    QCOMPARE(text.exitCode, 0);
    const QByteArray all = text.out + text.err;
    for (const char* code : {"leftover-temporary", "unused-data-file", "hard-linked-data"})
        QVERIFY2(all.contains(code), all.constData());
}

// The models of a folder and the temporaries of saves in it, as every caller sees them (the
// folder report, the readers search, clean, a folder of the Hub): regular files, links followed
// for models and never for temporaries; a folder named *.onnx or a dangling link is no model.
void TestFolderScan::oneRuleSaysWhatAFolderHolds()
{
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    for (const char* name : {"a.onnx", "B.ONNX", "readme.txt"})
        QVERIFY(QFile(QString::fromStdString((dir / name).string())).open(QIODevice::WriteOnly));
    fs::create_directory(dir / "folder.onnx");
    fs::create_symlink(dir / "gone.onnx", dir / "dangling.onnx");
    fs::create_symlink(dir / "a.onnx", dir / "link.onnx");
    const fs::path temp = tempNameFor(dir / "c.onnx");
    QVERIFY(QFile(QString::fromStdString(temp.string())).open(QIODevice::WriteOnly));
    const fs::path linkedTemp = tempNameFor(dir / "d.onnx");
    fs::create_symlink(dir / "a.onnx", linkedTemp);

    auto models = modelsInFolder(dir);
    QVERIFY(models);
    QCOMPARE(*models, (std::vector<std::string>{"B.ONNX", "a.onnx", "link.onnx"}));
    QVERIFY(isFolderModel("a.onnx", true));
    QVERIFY(!isFolderModel("sub/a.onnx", true)); // a subfolder's, in a server's listing
    QVERIFY(!isFolderModel("a.onnx", false));
    QVERIFY(!isFolderModel(temp.filename().string(), true));

    std::vector<std::string> temporaries;
    for (const ListedFile& f : listFolder(dir, isTempName).files)
        if (isSaveTemporary(f))
            temporaries.push_back(f.name);
    QCOMPARE(temporaries, std::vector<std::string>{temp.filename().string()});
    QVERIFY(!listFolder(dir / "missing", isTempName).error);
    QVERIFY(!listFolder(dir / "readme.txt", isTempName).error);
}

QTEST_APPLESS_MAIN(TestFolderScan)
#include "tst_folder_scan.moc"
