// Keeping placement (SaveOptions::keepPlacement, `repack --keep`, the Python package's save()
// without layout keywords, as onnx_ir's ir.save(model, path)): every tensor stays where it is.
// Inline stays inline; an external tensor stays in the data file of its location, at its
// offset where that file's layout allows; a range two tensors share stays shared; an unchanged
// model saved over itself writes nothing; saved elsewhere, its data files come along.
#include "core/inspect/plan_diff.h"
#include "core/model/model.h"
#include "core/plan/file_layout.h"
#include "core/plan/save_plan.h"
#include "core/plan/save_request.h"
#include "core/save/save.h"
#include "tests/support/cli_run.h"
#include "tests/support/graph_readers.h"
#include "tests/support/model_builder.h"
#include "tests/support/python_reader.h"
#include "tests/support/result_checks.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <onnx/onnx_pb.h>

#include <sys/stat.h>

using namespace repack;
using namespace fixtures;

namespace {

struct Place {
    bool external = false;
    std::string location;
    uint64_t offset = 0;
    bool operator==(const Place&) const = default;
};

std::map<std::string, Place> placesOf(const Model& model)
{
    std::map<std::string, Place> out;
    for (const TensorInfo& t : model.tensors())
        out[t.qualifiedName()]
            = t.isExternal() ? Place{true, t.external->location(), t.external->offset} : Place{};
    return out;
}

QString describe(const std::map<std::string, Place>& places)
{
    QStringList out;
    for (const auto& [name, p] : places)
        out << QString::fromStdString(
            name + (p.external ? " " + p.location + "@" + std::to_string(p.offset) : " inline"));
    return out.join(", ");
}

ino_t inodeOf(const QString& path)
{
    struct stat st { };
    return ::stat(path.toLocal8Bit().constData(), &st) == 0 ? st.st_ino : 0;
}

// A model whose tensors live in two data files (one in a subfolder) and inline, and two
// tensors sharing one range: t0..t3 as writeUint8Model writes them (t2, t3 external in
// m.onnx.data at unaligned offsets), plus "a" in sub/a.bin and "a_twin" on the same range.
QString twoFileModel(const QString& dir)
{
    const QString path
        = writeUint8Model(dir, "m.onnx", {100, 5000, 2 << 20, 3 << 20}, 1 << 20, "m.onnx.data");
    onnx::ModelProto proto;
    {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly) || !proto.ParseFromString(f.readAll().toStdString()))
            return {};
    }
    QDir(dir).mkpath("sub");
    QFile data(QDir(dir).filePath("sub/a.bin"));
    if (!data.open(QIODevice::WriteOnly))
        return {};
    const std::string bytes = tensorContent(9, 3000);
    data.write(QByteArray(13, '\x11') + QByteArray::fromStdString(bytes));
    data.close();
    for (const char* name : {"a", "a_twin"}) {
        onnx::TensorProto* t = proto.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::UINT8);
        t->add_dims(3000);
        t->set_data_location(onnx::TensorProto::EXTERNAL);
        for (const auto& [k, v] : {std::pair<std::string, std::string>{"location", "sub/a.bin"},
                 {"offset", "13"}, {"length", "3000"}}) {
            auto* e = t->add_external_data();
            e->set_key(k);
            e->set_value(v);
        }
    }
    return saveModel(proto, path) ? path : QString();
}

const FileLayout* layoutOf(const std::vector<FileLayout>& layouts, const std::string& location)
{
    for (const FileLayout& l : layouts)
        if (l.location == location)
            return &l;
    return nullptr;
}

const PlanDiffFile* diffOf(const PlanDiff& diff, const std::string& location)
{
    for (const PlanDiffFile& f : diff.files)
        if (f.location == location)
            return &f;
    return nullptr;
}

size_t indexOf(const Model& model, const std::string& qualifiedName)
{
    for (size_t i = 0; i < model.tensors().size(); ++i)
        if (model.tensors()[i].qualifiedName() == qualifiedName)
            return i;
    return SIZE_MAX;
}

SaveOptions keep()
{
    SaveOptions options;
    options.keepPlacement = true;
    return options;
}

} // namespace

class TestKeepPlacement : public QObject {
    Q_OBJECT

private slots:
    void anUnchangedModelSavedOverItselfWritesNothing();
    void savedElsewhereEveryTensorKeepsItsPlace();
    void aTensorMovedInMemoryIsWrittenWhereItIsNow();
    void keepExcludesLayoutOptions();
    void planKeepShowsNothingChanges();
    void keptInlinePastTwoGiBNamesTheDataOption();
    void pinsMoveOnlyThemselves();
    void aPinToTheFileATensorIsInKeepsIt();
    void keepWithDataSendsThePinsThatNameNoFileThere();
    void pinsOverAKeptSafetensorsFileAreRefused();
    void aDataFileNoPinTouchesIsNotWritten();
    void aFileOtherGraphsShareIsKeptWhole();
    void aKeptFileIsCheckedAgainstItsChecksums();
    void compactingAFileClosesItsOrphanedBytes();
    void compactGoesWithKeep();
    void pinnedOutRangesAreOrphanedAtEveryAlignment_data();
    void pinnedOutRangesAreOrphanedAtEveryAlignment();
    void otherWritersFilesAreOrphanedOnlyWhereATensorWasPinnedOut_data();
    void otherWritersFilesAreOrphanedOnlyWhereATensorWasPinnedOut();
};

void TestKeepPlacement::anUnchangedModelSavedOverItselfWritesNothing()
{
    QTemporaryDir dir;
    const QString path = twoFileModel(dir.path());
    QVERIFY(!path.isEmpty());
    const auto hashes = hashFolder(dir.path());
    const ino_t inode = inodeOf(path);
    auto model = loadModel(path);
    QVERIFY(model);
    const auto places = placesOf(*model);
    auto report = save(*model, path.toStdString(), keep());
    QVERIFY_OK(report);
    QVERIFY(report->unchanged);
    QCOMPARE(report->bytesWritten, uint64_t(0));
    QCOMPARE(hashFolder(dir.path()), hashes);
    QCOMPARE(inodeOf(path), inode);
    QCOMPARE(describe(placesOf(*model)), describe(places));
    // The defaults of a repack lay it out anew (aligned, in declaration order): not kept.
    auto relaid = save(*model, path.toStdString(), SaveOptions());
    QVERIFY_OK(relaid);
    QVERIFY(!relaid->unchanged);
}

void TestKeepPlacement::savedElsewhereEveryTensorKeepsItsPlace()
{
    QTemporaryDir dir;
    const QString path = twoFileModel(QDir(dir.path()).filePath("in"));
    QVERIFY(!path.isEmpty());
    auto model = loadModel(path);
    QVERIFY(model);
    const auto places = placesOf(*model);
    const auto values = readAllTensors(*model);
    const QString out = QDir(dir.path()).filePath("out/m.onnx");
    QVERIFY(QDir().mkpath(QDir(dir.path()).filePath("out")));
    auto report = save(*model, out.toStdString(), keep());
    QVERIFY_OK(report);
    auto saved = loadModel(out);
    QVERIFY(saved);
    QCOMPARE(describe(placesOf(*saved)), describe(places));
    QCOMPARE(readAllTensors(*saved), values);
    QVERIFY((*saved).problems().empty());
    // The shared range is stored once: sub/a.bin holds its 13 leading bytes and one copy.
    QCOMPARE(QFileInfo(QDir(dir.path()).filePath("out/sub/a.bin")).size(), qint64(13 + 3000));
    QCOMPARE(report->dataFiles.size(), size_t(2));
}

void TestKeepPlacement::aTensorMovedInMemoryIsWrittenWhereItIsNow()
{
    // What the model says now is kept, not what the files held when it was loaded.
    QTemporaryDir dir;
    const QString path = twoFileModel(dir.path());
    QVERIFY(!path.isEmpty());
    auto model = loadModel(path);
    QVERIFY(model);
    SaveOptions inlineAll;
    inlineAll.allInline = true;
    const QString elsewhere = QDir(dir.path()).filePath("inline.onnx");
    QVERIFY_OK(save(*model, elsewhere.toStdString(), inlineAll)); // the model is that now
    QVERIFY_OK(save(*model, path.toStdString(), keep()));
    auto saved = loadModel(path);
    QVERIFY(saved);
    for (const TensorInfo& t : saved->tensors())
        QVERIFY2(!t.isExternal(), t.qualifiedName().c_str());
}

void TestKeepPlacement::keepExcludesLayoutOptions()
{
    QTemporaryDir dir;
    const QString path = twoFileModel(dir.path());
    QVERIFY(!path.isEmpty());
    const auto hashes = hashFolder(dir.path());
    for (const QStringList& other : {QStringList{"--threshold", "1"}, QStringList{"--inline"},
             QStringList{"--data", "x.bin"}, QStringList{"--shard-size", "1MiB"}}) {
        const CliRun run = runCli(QStringList{"repack", path, "-o", path, "--keep"} + other);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(
            run.err.contains("--keep excludes " + other.front().toUtf8()), run.err.constData());
    }
    QCOMPARE(hashFolder(dir.path()), hashes);
    // The save request's rule, for every front end: a data file nothing would go to is refused,
    // unless the caller brings pins that go there (the desktop app's "save's data file").
    SaveRequest request;
    request.keep = true;
    request.data = "x.bin";
    auto refused = applySaveRequest(request, path.toStdString());
    QVERIFY(!refused);
    QVERIFY(refused.error().is(ErrorKind::Usage));
    QCOMPARE(refused.error().message, std::string("--keep excludes --data"));
    request.dataForPins = true;
    QVERIFY_OK(applySaveRequest(request, path.toStdString()));
}

void TestKeepPlacement::planKeepShowsNothingChanges()
{
    QTemporaryDir dir;
    const QString path = twoFileModel(dir.path());
    QVERIFY(!path.isEmpty());
    const CliRun plan = runCli({"plan", path, "--keep", "--diff"});
    QVERIFY2(plan.exitCode == 0, plan.err.constData());
    QVERIFY2(plan.out.startsWith("nothing changes: all 6 tensor(s) keep their place"),
        plan.out.constData());
    const CliRun repack = runCli({"repack", path, "-o", path, "--keep"});
    QVERIFY2(repack.exitCode == 0, repack.err.constData());
    QVERIFY2(repack.out.startsWith("nothing to change: "), repack.out.constData());
}

void TestKeepPlacement::keptInlinePastTwoGiBNamesTheDataOption()
{
    // A tensor whose dims say 3 GiB (its few bytes carried as they are, --allow-corrupt): kept
    // inline it passes protobuf's limit, and the refusal says how to store it externally.
    auto proto = std::make_unique<onnx::ModelProto>();
    proto->set_ir_version(8);
    onnx::TensorProto* t = proto->mutable_graph()->add_initializer();
    t->set_name("huge");
    t->set_data_type(onnx::TensorProto::UINT8);
    t->add_dims(int64_t(3) << 30);
    t->set_raw_data("x");
    auto model = Model::fromProto(std::move(proto), QDir::tempPath().toStdString());
    SaveOptions options = keep();
    options.allowCorrupt = true;
    options.dataOptionName = "external_data=";
    auto plan = planSave(*model, QDir::temp().filePath("huge.onnx").toStdString(), options);
    QVERIFY(!plan);
    QVERIFY2(plan.error().message.find("2 GiB protobuf limit") != std::string::npos,
        plan.error().message.c_str());
    QVERIFY2(plan.error().message.find("(external_data=)") != std::string::npos,
        plan.error().message.c_str());
}

void TestKeepPlacement::pinsMoveOnlyThemselves()
{
    // The desktop app's pins over the layout on disk: t0 (inline) pinned into sub/a.bin goes
    // after the range there, t3 (external) pinned inline comes inline, t1 pinned to the save's
    // data file goes to the default one; t2 pinned to the file it is in and every other tensor
    // stay at their offsets.
    QTemporaryDir dir;
    const QString path = twoFileModel(dir.path());
    QVERIFY(!path.isEmpty());
    auto model = loadModel(path);
    QVERIFY(model);
    auto before = placesOf(*model);
    const auto values = readAllTensors(*model);
    SaveOptions options = keep();
    options.dataFile = "new.bin";
    options.placements.resize(model->tensors().size());
    for (size_t i = 0; i < model->tensors().size(); ++i) {
        const std::string name = model->tensors()[i].qualifiedName();
        if (name == "graph/t0")
            options.placements[i] = TensorPlacement(Placement::External, "sub/a.bin");
        else if (name == "graph/t3")
            options.placements[i] = TensorPlacement(Placement::Inline);
        else if (name == "graph/t1")
            options.placements[i] = TensorPlacement(Placement::External);
        else if (name == "graph/t2") // the file it is in: it stays at its offset
            options.placements[i] = TensorPlacement(Placement::External, "./m.onnx.data");
    }
    QVERIFY_OK(save(*model, path.toStdString(), options));
    auto saved = loadModel(path);
    QVERIFY(saved);
    QCOMPARE(readAllTensors(*saved), values);
    QVERIFY(saved->problems().empty());
    auto expected = before;
    expected["graph/t0"] = Place{true, "sub/a.bin", 13 + 3000};
    expected["graph/t3"] = Place{};
    expected["graph/t1"] = Place{true, "new.bin", 0};
    QCOMPARE(describe(placesOf(*saved)), describe(expected));
    // The layout on disk is the baseline again: kept without pins, nothing changes.
    auto again = save(*saved, path.toStdString(), keep());
    QVERIFY_OK(again);
    QVERIFY(again->unchanged);
}

// A pin out of one data file rewrites that file and the model only: the other data file, whose
// bytes do not change, keeps its inode and its modification time (issue 35's roll-forward; issue
// 36 item 2: a one-tensor pin on a model of tens of GiB must not rewrite every file).
void TestKeepPlacement::aDataFileNoPinTouchesIsNotWritten()
{
    QTemporaryDir dir;
    const QString path = twoFileModel(dir.path());
    QVERIFY(!path.isEmpty());
    auto model = loadModel(path);
    QVERIFY(model);
    const auto values = readAllTensors(*model);
    const QString untouched = dir.filePath("sub/a.bin"), pinned = dir.filePath("m.onnx.data");
    struct stat before {
    }, pinnedBefore{};
    QVERIFY(::stat(untouched.toLocal8Bit().constData(), &before) == 0);
    QVERIFY(::stat(pinned.toLocal8Bit().constData(), &pinnedBefore) == 0);
    SaveOptions options = keep();
    options.placements.resize(model->tensors().size());
    for (size_t i = 0; i < model->tensors().size(); ++i)
        if (model->tensors()[i].qualifiedName() == "graph/t2") // the last of m.onnx.data
            options.placements[i] = TensorPlacement(Placement::Inline);
    QThread::msleep(20); // a rewrite would show in the modification time
    auto saved = save(*model, path.toStdString(), options);
    QVERIFY_OK(saved);
    struct stat after {
    }, pinnedAfter{};
    QVERIFY(::stat(untouched.toLocal8Bit().constData(), &after) == 0);
    QVERIFY(::stat(pinned.toLocal8Bit().constData(), &pinnedAfter) == 0);
    QCOMPARE(after.st_ino, before.st_ino);
    QCOMPARE(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
    QCOMPARE(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    QVERIFY(pinnedAfter.st_ino != pinnedBefore.st_ino); // the file the pin changed is new
    // Only the model and m.onnx.data were written.
    QCOMPARE(
        saved->bytesWritten, uint64_t(QFileInfo(path).size()) + uint64_t(QFileInfo(pinned).size()));
    auto reloaded = loadModel(path);
    QVERIFY(reloaded);
    QCOMPARE(readAllTensors(*reloaded), values);
    // --rewrite writes every file anew.
    SaveOptions rewrite = keep();
    rewrite.rewrite = true;
    QVERIFY_OK(save(*reloaded, path.toStdString(), rewrite));
    QVERIFY(inodeOf(untouched) != before.st_ino);
}

// Two models read one data file, each its own range (as the graphs of a folder saved with one
// shared file): keeping one's placement writes nothing, though the file is longer than that
// model's last tensor; the other model's bytes are not this save's to cut.
void TestKeepPlacement::aFileOtherGraphsShareIsKeptWhole()
{
    QTemporaryDir dir;
    const std::string a = tensorContent(1, 4096), b = tensorContent(2, 4096);
    QFile data(dir.filePath("s.data"));
    QVERIFY(data.open(QIODevice::WriteOnly));
    data.write(QByteArray::fromStdString(a + b));
    data.close();
    for (const auto& [name, offset] : {std::pair{"a.onnx", 0}, std::pair{"b.onnx", 4096}}) {
        onnx::ModelProto proto = emptyModel();
        onnx::TensorProto t = rawTensor("w", onnx::TensorProto::UINT8, {4096});
        t.clear_raw_data();
        setExternal(t, "s.data", std::to_string(offset), "4096");
        *proto.mutable_graph()->add_initializer() = t;
        QVERIFY(saveModel(proto, dir.filePath(name)));
    }
    const ino_t inode = inodeOf(dir.filePath("s.data"));
    auto model = loadModel(dir.filePath("a.onnx"));
    QVERIFY(model);
    auto saved = save(*model, dir.filePath("a.onnx").toStdString(), keep());
    QVERIFY_OK(saved);
    QVERIFY(saved->unchanged);
    QCOMPARE(inodeOf(dir.filePath("s.data")), inode);
    QCOMPARE(QFileInfo(dir.filePath("s.data")).size(), qint64(8192));
}

// A file a save keeps is not copied, so its bytes are not checked while copying: a tensor in it
// whose bytes fail their checksum is still refused (SPEC 5a, integrity before rewrite), as a
// save that copies it would refuse it.
void TestKeepPlacement::aKeptFileIsCheckedAgainstItsChecksums()
{
    QTemporaryDir dir;
    const QString path = twoFileModel(dir.path());
    QVERIFY(!path.isEmpty());
    {
        onnx::ModelProto proto;
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(proto.ParseFromString(f.readAll().toStdString()));
        f.close();
        for (auto& t : *proto.mutable_graph()->mutable_initializer())
            if (t.name() == "a") { // in sub/a.bin, which the pin below leaves alone
                auto* e = t.add_external_data();
                e->set_key("checksum");
                e->set_value(std::string(40, '0'));
            }
        QVERIFY(saveModel(proto, path));
    }
    auto model = loadModel(path);
    QVERIFY(model);
    const auto before = hashFolder(dir.path());
    SaveOptions options = keep();
    options.placements.resize(model->tensors().size());
    for (size_t i = 0; i < model->tensors().size(); ++i)
        if (model->tensors()[i].qualifiedName() == "graph/t2")
            options.placements[i] = TensorPlacement(Placement::Inline);
    auto refused = save(*model, path.toStdString(), options);
    QVERIFY(!refused);
    QCOMPARE(refused.error().kind, ErrorKind::Corrupt);
    QVERIFY2(refused.error().message.find("graph/a") != std::string::npos,
        refused.error().message.c_str());
    QCOMPARE(hashFolder(dir.path()), before);
}

void TestKeepPlacement::aPinToTheFileATensorIsInKeepsIt()
{
    // t2 pinned to "the save's data file" (m.onnx.data is that), t3 to "./m.onnx.data": both
    // stay, so nothing changes; t0 pinned to "./sub/a.bin" joins the file of a and a_twin (one
    // file, not two spellings of it).
    QTemporaryDir dir;
    const QString path = twoFileModel(dir.path());
    QVERIFY(!path.isEmpty());
    auto model = loadModel(path);
    QVERIFY(model);
    const auto hashes = hashFolder(dir.path());
    SaveOptions options = keep();
    options.placements.resize(model->tensors().size());
    auto pin = [&](const std::string& name, TensorPlacement where) {
        for (size_t i = 0; i < model->tensors().size(); ++i)
            if (model->tensors()[i].qualifiedName() == name)
                options.placements[i] = std::move(where);
    };
    pin("graph/t2", TensorPlacement(Placement::External));
    pin("graph/t3", TensorPlacement(Placement::External, "./m.onnx.data"));
    auto unchanged = save(*model, path.toStdString(), options);
    QVERIFY_OK(unchanged);
    QVERIFY(unchanged->unchanged);
    QCOMPARE(hashFolder(dir.path()), hashes);

    auto expected = placesOf(*model);
    pin("graph/t0", TensorPlacement(Placement::External, "./sub/a.bin"));
    QVERIFY_OK(save(*model, path.toStdString(), options));
    auto saved = loadModel(path);
    QVERIFY(saved);
    expected["graph/t0"] = Place{true, "sub/a.bin", 13 + 3000};
    QCOMPARE(describe(placesOf(*saved)), describe(expected));
}

void TestKeepPlacement::pinsOverAKeptSafetensorsFileAreRefused()
{
    // A model whose data file is a .safetensors file: kept as it is, nothing changes; a pin
    // over the kept layout would write the file again at its offsets without its header (it
    // did: readers of the format could no longer read it), so the plan is refused, naming the
    // tensor and the file, and nothing is written.
    QTemporaryDir dir;
    const QString raw
        = writeUint8Model(dir.path(), "raw.onnx", {100, 5000, 6000, 7000}, 1 << 20, "raw.data");
    QVERIFY(!raw.isEmpty());
    auto source = loadModel(raw);
    QVERIFY(source);
    SaveOptions asSafetensors;
    asSafetensors.format = DataFormat::Safetensors;
    asSafetensors.alignment = 0;
    const QString path = QDir(dir.path()).filePath("st.onnx");
    QVERIFY_OK(save(*source, path.toStdString(), asSafetensors));
    auto model = loadModel(path);
    QVERIFY(model);
    auto unchanged = save(*model, path.toStdString(), keep());
    QVERIFY_OK(unchanged);
    QVERIFY(unchanged->unchanged);

    const auto hashes = hashFolder(dir.path());
    SaveOptions options = keep();
    options.placements.resize(model->tensors().size());
    for (size_t i = 0; i < model->tensors().size(); ++i)
        if (model->tensors()[i].qualifiedName() == "graph/t2")
            options.placements[i] = TensorPlacement(Placement::Inline);
    auto refused = save(*model, path.toStdString(), options);
    QVERIFY(!refused);
    const std::string& message = refused.error().message;
    QVERIFY2(message.find("graph/t2") != std::string::npos
            && message.find("st.onnx.safetensors is a safetensors file") != std::string::npos,
        message.c_str());
    QCOMPARE(hashFolder(dir.path()), hashes);
    // A pin that moves nothing (t3 to the file it is in) is no move: nothing to change.
    options.placements.assign(model->tensors().size(), TensorPlacement());
    for (size_t i = 0; i < model->tensors().size(); ++i)
        if (model->tensors()[i].qualifiedName() == "graph/t3")
            options.placements[i] = TensorPlacement(Placement::External, "st.onnx.safetensors");
    auto still = save(*model, path.toStdString(), options);
    QVERIFY_OK(still);
    QVERIFY(still->unchanged);
}

void TestKeepPlacement::keepWithDataSendsThePinsThatNameNoFileThere()
{
    // The desktop app keeps every tensor where it is and names the save's data file (the Data
    // file field): a pin that names no file goes there, not to m.onnx.data; every other tensor
    // stays. A request that brings no pins, as the CLI's --keep (which takes no plan), is
    // refused --data (keepExcludesLayoutOptions).
    QTemporaryDir dir;
    const QString path = twoFileModel(dir.path());
    QVERIFY(!path.isEmpty());
    auto model = loadModel(path);
    QVERIFY(model);
    SaveRequest request;
    request.keep = true;
    request.data = "sub/a.bin";
    request.dataForPins = true;
    auto applied = applySaveRequest(request, path.toStdString());
    QVERIFY_OK(applied);
    SaveOptions options = applied->options;
    QVERIFY(options.keepPlacement);
    QCOMPARE(saveDataFile(path.toStdString(), options), std::string("sub/a.bin"));
    options.placements.resize(model->tensors().size());
    auto expected = placesOf(*model);
    for (size_t i = 0; i < model->tensors().size(); ++i)
        if (model->tensors()[i].qualifiedName() == "graph/t0")
            options.placements[i] = TensorPlacement(Placement::External);
    QVERIFY_OK(save(*model, path.toStdString(), options));
    auto saved = loadModel(path);
    QVERIFY(saved);
    expected["graph/t0"] = Place{true, "sub/a.bin", 13 + 3000};
    QCOMPARE(describe(placesOf(*saved)), describe(expected));
    QVERIFY(QDir(dir.path()).entryList({"*.data"}, QDir::Files) == QStringList{"m.onnx.data"});
}

// Pinning the first tensor out of m.onnx.data, keeping placement, leaves its range orphaned
// (the preview says so, not "padding"); compacting the file lays its own tensors out again back
// to back with the alignment rules, every value intact (read back by python3-onnx too), and the
// preview shows the orphaned bytes going. sub/a.bin, not compacted, keeps its inode and its own
// 13 orphaned bytes.
void TestKeepPlacement::compactingAFileClosesItsOrphanedBytes()
{
    QTemporaryDir dir;
    const QString path = twoFileModel(dir.path());
    QVERIFY(!path.isEmpty());
    auto model = loadModel(path);
    QVERIFY(model);
    const auto values = readAllTensors(*model);
    std::map<std::string, std::string> byName; // as python3-onnx names them
    for (size_t i = 0; i < model->tensors().size(); ++i)
        byName[model->tensors()[i].name] = values.at(model->tensors()[i].qualifiedName());
    const size_t t3 = indexOf(*model, "graph/t3"); // first in m.onnx.data, at offset 7
    QVERIFY(t3 != SIZE_MAX);
    QCOMPARE(model->tensors()[t3].external->offset, uint64_t(7));
    constexpr uint64_t kHole = 7 + (3 << 20) + 7; // t3 and the fill on either side

    SaveOptions pin = keep();
    pin.placements.resize(model->tensors().size());
    pin.placements[t3] = TensorPlacement(Placement::Inline);
    auto pinPlan = planSave(*model, path.toStdString(), pin);
    QVERIFY_OK(pinPlan);
    const PlanDiff pinDiff = diffPlan(*model, *pinPlan);
    const PlanDiffFile* pinned = diffOf(pinDiff, "m.onnx.data");
    QVERIFY(pinned);
    QCOMPARE(pinned->orphanedAfter, kHole);
    QCOMPARE(pinned->paddingAfter, uint64_t(0));
    QVERIFY_OK(save(*model, path.toStdString(), pin));

    model = loadModel(path);
    QVERIFY(model);
    const auto holed = computeLayout(*model, kDefaultAlignment);
    QVERIFY(layoutOf(holed, "m.onnx.data"));
    QCOMPARE(layoutOf(holed, "m.onnx.data")->orphanedBytes, kHole);
    QCOMPARE(layoutOf(holed, "sub/a.bin")->orphanedBytes, uint64_t(13));
    const QString untouched = dir.filePath("sub/a.bin");
    const ino_t untouchedInode = inodeOf(untouched);

    SaveOptions compact = keep();
    compact.compactFiles = {"./m.onnx.data"}; // any spelling of the file
    auto plan = planSave(*model, path.toStdString(), compact);
    QVERIFY_OK(plan);
    const PlanDiff diff = diffPlan(*model, *plan);
    const PlanDiffFile* file = diffOf(diff, "m.onnx.data");
    QVERIFY(file);
    QCOMPARE(file->orphanedBefore, kHole);
    QCOMPARE(file->orphanedAfter, uint64_t(0));
    QCOMPARE(file->bytesAfter, uint64_t(2 << 20)); // t2 alone, at 0 (4 KiB-aligned)
    QCOMPARE(diffOf(diff, "sub/a.bin")->orphanedAfter, uint64_t(13));
    QVERIFY(!diff.changesNothing());

    auto saved = save(*model, path.toStdString(), compact);
    QVERIFY_OK(saved);
    QCOMPARE(inodeOf(untouched), untouchedInode);
    auto reloaded = loadModel(path);
    QVERIFY(reloaded);
    QCOMPARE(readAllTensors(*reloaded), values);
    const auto compacted = computeLayout(*reloaded, kDefaultAlignment);
    QCOMPARE(layoutOf(compacted, "m.onnx.data")->orphanedBytes, uint64_t(0));
    QCOMPARE(layoutOf(compacted, "m.onnx.data")->bytes, uint64_t(2 << 20));
    QCOMPARE(layoutOf(compacted, "sub/a.bin")->orphanedBytes, uint64_t(13));
    QCOMPARE(placesOf(*reloaded).at("graph/a").offset, uint64_t(13));
    QVERIFY_PYTHON_LOADS(REPACK_VALUES_SCRIPT, path, hashesOf(byName), "compacted");

    // Compacting a compact file changes nothing, so writes nothing.
    auto again = save(*reloaded, path.toStdString(), compact);
    QVERIFY_OK(again);
    QVERIFY(again->unchanged);
}

// Compacting keeps every other tensor where it is: a save laid out anew has nothing to compact,
// and the request says which option it needs, in each front end's words; a file the model does
// not read is named.
void TestKeepPlacement::compactGoesWithKeep()
{
    SaveRequest request;
    request.compact = {"w1.bin"};
    auto refused = applySaveRequest(request, "m.onnx");
    QVERIFY(!refused);
    QCOMPARE(refused.error().kind, ErrorKind::Usage);
    QCOMPARE(QString::fromStdString(refused.error().message).left(22), "--compact goes with --");
    request.keep = true;
    auto applied = applySaveRequest(request, "m.onnx");
    QVERIFY_OK(applied);
    QCOMPARE(applied->options.compactFiles, std::vector<std::string>{"w1.bin"});

    QTemporaryDir dir;
    const QString path = twoFileModel(dir.path());
    auto model = loadModel(path);
    QVERIFY(model);
    auto plan = planSave(*model, path.toStdString(), applied->options);
    QVERIFY(!plan);
    QVERIFY2(
        plan.error().message.find("w1.bin") != std::string::npos, plan.error().message.c_str());
    const auto cli = runCli({"repack", path, "-o", path, "--compact", "m.onnx.data"});
    QCOMPARE(cli.exitCode, 2);
    QVERIFY2(cli.err.contains("--compact goes with --keep"), cli.err.constData());
    QCOMPARE(
        runCli({"repack", path, "-o", path, "--keep", "--compact", "m.onnx.data"}).exitCode, 0);
    auto reloaded = loadModel(path);
    QVERIFY(reloaded);
    QCOMPARE(layoutOf(computeLayout(*reloaded, kDefaultAlignment), "m.onnx.data")->orphanedBytes,
        uint64_t(0));
}

void TestKeepPlacement::pinnedOutRangesAreOrphanedAtEveryAlignment_data()
{
    QTest::addColumn<quint64>("alignment");
    for (quint64 alignment : {1ull, 4096ull, 65536ull, 16ull << 20})
        QTest::addRow("%llu", alignment) << alignment;
}

// A file this tool wrote with an alignment has that alignment's gaps as padding and nothing
// orphaned; pinning its middle tensor out, the others keeping their place, leaves that tensor's
// range and the padding after it orphaned, though the next offset is as aligned as ever. The
// plan, the save's report and the layout read back agree.
void TestKeepPlacement::pinnedOutRangesAreOrphanedAtEveryAlignment()
{
    QFETCH(quint64, alignment);
    QTemporaryDir dir;
    const QString path
        = writeUint8Model(dir.path(), "m.onnx", {65536, 65536, 65536}, 1 << 20, "m.onnx.data");
    auto model = loadModel(path);
    QVERIFY(model);
    SaveOptions laid;
    laid.threshold = 1024;
    laid.alignment = alignment;
    laid.alignThreshold = 0;
    auto written = save(*model, path.toStdString(), laid);
    QVERIFY_OK(written);
    model = loadModel(path);
    QVERIFY(model);
    const std::map<std::string, Place> places = placesOf(*model);
    const uint64_t first = places.at("graph/t0").offset + 65536;
    const uint64_t middle = places.at("graph/t1").offset;
    const uint64_t last = places.at("graph/t2").offset;
    const auto layoutsBefore = computeLayout(*model, alignment);
    const FileLayout* before = layoutOf(layoutsBefore, "m.onnx.data");
    QVERIFY(before);
    QCOMPARE(before->orphanedBytes, uint64_t(0));
    QCOMPARE(before->paddingBytes, (middle - first) + (last - middle - 65536));
    QCOMPARE(written->paddingBytes, before->paddingBytes);

    SaveOptions pin = keep();
    pin.alignment = alignment;
    pin.alignThreshold = 0;
    pin.placements.resize(model->tensors().size());
    pin.placements[indexOf(*model, "graph/t1")] = TensorPlacement(Placement::Inline);
    auto plan = planSave(*model, path.toStdString(), pin);
    QVERIFY_OK(plan);
    const PlanDiff diff = diffPlan(*model, *plan);
    const PlanDiffFile* planned = diffOf(diff, "m.onnx.data");
    QVERIFY(planned);
    QCOMPARE(planned->orphanedAfter, last - middle);
    QCOMPARE(planned->paddingAfter, middle - first);
    QVERIFY_OK(save(*model, path.toStdString(), pin));
    model = loadModel(path);
    QVERIFY(model);
    const auto layoutsAfter = computeLayout(*model, alignment);
    const FileLayout* after = layoutOf(layoutsAfter, "m.onnx.data");
    QVERIFY(after);
    QCOMPARE(after->orphanedBytes, last - middle);
    QCOMPARE(after->paddingBytes, middle - first);
    QCOMPARE(after->alignment, alignment);
}

void TestKeepPlacement::otherWritersFilesAreOrphanedOnlyWhereATensorWasPinnedOut_data()
{
    QTest::addColumn<QString>("writer");
    QTest::addColumn<quint64>("alignment");
    // onnx 1.12 writes tensors back to back (no alignment); ONNX Runtime aligns those of 1 MiB
    // and more to 4096. Each is counted against its own alignment and larger ones: a smaller
    // one (what a save would use, the writer's being unknown) does not explain its gaps.
    for (quint64 alignment : {1ull, 4096ull, 65536ull, 16ull << 20})
        QTest::addRow("onnx-%llu", alignment) << QStringLiteral("onnx") << alignment;
    for (quint64 alignment : {4096ull, 65536ull, 16ull << 20})
        QTest::addRow("onnxruntime-%llu", alignment) << QStringLiteral("onnxruntime") << alignment;
}

// Files laid out by onnx's and ONNX Runtime's own writers (two large weights among small ones):
// their gaps are padding, nothing is orphaned; pinning the first large weight out, the others
// keeping their place, leaves its range orphaned, the bytes of the file conserved.
void TestKeepPlacement::otherWritersFilesAreOrphanedOnlyWhereATensorWasPinnedOut()
{
    QFETCH(QString, writer);
    QFETCH(quint64, alignment);
    if (writer == QStringLiteral("onnxruntime") && !onnxRuntimeAvailable())
        QSKIP("ONNX Runtime is not installed for the tests");
    QTemporaryDir dir;
    const QString inlined = dir.filePath(QStringLiteral("inline.onnx"));
    const QString path = dir.filePath(QStringLiteral("m.onnx"));
    QString failed = onnxWriterFailure(
        {QStringLiteral("model"), inlined, QStringLiteral("3000"), QStringLiteral("300000"),
            QStringLiteral("700"), QStringLiteral("280000"), QStringLiteral("5000")});
    QVERIFY2(failed.isEmpty(), qPrintable(failed));
    failed = writer == QStringLiteral("onnx")
        ? onnxWriterFailure({QStringLiteral("external"), inlined, path, QStringLiteral("w.bin")})
        : onnxRuntimeWriteFailure(inlined, path, QStringLiteral("w.bin"));
    QVERIFY2(failed.isEmpty(), qPrintable(failed));

    auto model = loadModel(path);
    QVERIFY(model);
    QCOMPARE(model->tensors().size(), size_t(5));
    const auto layoutsBefore = computeLayout(*model, alignment);
    const FileLayout* before = layoutOf(layoutsBefore, "w.bin");
    QVERIFY(before);
    QCOMPARE(before->orphanedBytes, uint64_t(0));
    // ONNX Runtime's file has gaps: the test sees padding, not only a dense file.
    QVERIFY(
        writer == QStringLiteral("onnx") ? before->paddingBytes == 0 : before->paddingBytes > 0);

    const size_t large = indexOf(*model, "graph/w1");
    QVERIFY(large != SIZE_MAX);
    const uint64_t length = model->tensors()[large].byteSize();
    QCOMPARE(length, uint64_t(1200000));
    SaveOptions pin = keep();
    pin.alignment = alignment;
    pin.placements.resize(model->tensors().size());
    pin.placements[large] = TensorPlacement(Placement::Inline);
    QVERIFY_OK(save(*model, path.toStdString(), pin));
    model = loadModel(path);
    QVERIFY(model);
    const auto layoutsAfter = computeLayout(*model, alignment);
    const FileLayout* after = layoutOf(layoutsAfter, "w.bin");
    QVERIFY(after);
    QCOMPARE(after->bytes, before->bytes); // every other tensor kept its place
    QVERIFY2(after->orphanedBytes >= length, qPrintable(QString::number(after->orphanedBytes)));
    QCOMPARE(after->orphanedBytes + after->paddingBytes, before->paddingBytes + length);
}

QTEST_GUILESS_MAIN(TestKeepPlacement)
#include "tst_keep_placement.moc"
