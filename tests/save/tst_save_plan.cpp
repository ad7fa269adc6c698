// planSave(): where each tensor goes and at which offset, computed without writing. Expected
// offsets are worked out by hand from SPEC section 5, not taken from the tool's output.
#include "core/inspect/plan_diff.h"
#include "core/model/model.h"
#include "core/plan/file_layout.h"
#include "core/plan/save_plan.h"
#include "tests/support/model_builder.h"
#include "tests/support/result_checks.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"

#include <QTemporaryDir>
#include <QTest>

#include <onnx/onnx_pb.h>

using namespace repack;
using namespace fixtures;

Q_DECLARE_METATYPE(std::vector<uint64_t>)

namespace {

constexpr quint64 MiB = 1 << 20; // quint64: QTest rows check the exact type
constexpr quint64 GiB = 1ull << 30;

// An in-memory model of uint8 initializers t0.. of `sizes` bytes.
std::unique_ptr<Model> uint8Model(const std::vector<uint64_t>& sizes)
{
    auto proto = std::make_unique<onnx::ModelProto>(emptyModel());
    for (size_t i = 0; i < sizes.size(); ++i)
        *proto->mutable_graph()->add_initializer()
            = rawTensor(tensorName(i), 2, {int64_t(sizes[i])}, tensorContent(i, sizes[i]));
    return Model::fromProto(std::move(proto), "/nonexistent");
}

SaveOptions everythingExternal()
{
    SaveOptions options;
    options.threshold = 1;
    return options;
}

std::vector<uint64_t> offsetsOf(const SavePlan& plan)
{
    std::vector<uint64_t> out;
    for (const auto& t : plan.tensors)
        out.push_back(t.offset);
    return out;
}

} // namespace

class TestSavePlan : public QObject {
    Q_OBJECT
private slots:
    void defaultThresholdIs1024();
    void thresholdIsInclusive_data();
    void thresholdIsInclusive();
    void attributeTensorsIncludedUnlessExcluded_data();
    void attributeTensorsIncludedUnlessExcluded();
    void largeTensorsAligned_data();
    void largeTensorsAligned();
    void declarationOrderByDefault();
    void sizeOrderKeepsTiesInDeclarationOrder();
    void shardNames();
    void shardsSplitAtLimit_data();
    void shardsSplitAtLimit();
    void explicitPlanOverridesThreshold();
    void pinnedFilesGetTheirTensors();
    void pinnedFileNamesAreChecked_data();
    void pinnedFileNamesAreChecked();
    void allInlinePast2GiBFails();
    void dataFileOutsideFolderFails_data();
    void dataFileOutsideFolderFails();
    void planDiffSaysWhatChanges();
};

void TestSavePlan::defaultThresholdIs1024()
{
    QCOMPARE(SaveOptions{}.threshold, 1024u);
    auto model = uint8Model({1023, 1024});
    auto plan = planSave(*model, "/x/m.onnx", SaveOptions{});
    QVERIFY_OK(plan);
    QVERIFY(!plan->tensors[0].external);
    QVERIFY(plan->tensors[1].external);
    QCOMPARE(plan->files, std::vector<std::string>{"m.onnx.data"});
}

void TestSavePlan::thresholdIsInclusive_data()
{
    QTest::addColumn<int>("dtype");
    QTest::addColumn<qint64>("elements");
    QTest::addColumn<quint64>("threshold");
    QTest::addColumn<bool>("external");

    QTest::newRow("one byte below") << 2 << 999ll << 1000ull << false;
    QTest::newRow("exactly the threshold") << 2 << 1000ll << 1000ull << true;
    QTest::newRow("above") << 2 << 1001ll << 1000ull << true;
    QTest::newRow("float counts bytes, not elements") << 1 << 250ll << 1000ull << true;
    QTest::newRow("float one element short") << 1 << 249ll << 1000ull << false;
    QTest::newRow("int4 packs two per byte") << 22 << 2000ll << 1000ull << true;
    QTest::newRow("zero bytes at threshold 0 stays inline") << 1 << 0ll << 0ull << false;
    QTest::newRow("string at threshold 0 stays inline") << 8 << 4ll << 0ull << false;
    QTest::newRow("big string stays inline") << 8 << 5000ll << 1ull << false;
}

void TestSavePlan::thresholdIsInclusive()
{
    QFETCH(int, dtype);
    QFETCH(qint64, elements);
    QFETCH(quint64, threshold);
    QFETCH(bool, external);

    auto proto = std::make_unique<onnx::ModelProto>(emptyModel());
    *proto->mutable_graph()->add_initializer()
        = dtype == 8 ? typedTensor("x", dtype, {elements}) : rawTensor("x", dtype, {elements});
    auto model = Model::fromProto(std::move(proto), "/nonexistent");
    SaveOptions options;
    options.threshold = threshold;
    auto plan = planSave(*model, "/x/m.onnx", options);
    QVERIFY_OK(plan);
    QCOMPARE(plan->tensors[0].external, external);
    QCOMPARE(plan->files.size(), external ? 1u : 0u);
}

void TestSavePlan::attributeTensorsIncludedUnlessExcluded_data()
{
    QTest::addColumn<bool>("includeAttributes");
    QTest::newRow("included by default") << true;
    QTest::newRow("excluded") << false;
}

void TestSavePlan::attributeTensorsIncludedUnlessExcluded()
{
    QFETCH(bool, includeAttributes);
    auto proto = std::make_unique<onnx::ModelProto>(emptyModel());
    *proto->mutable_graph()->add_initializer() = rawTensor("w", 2, {4096});
    addConstant(*proto->mutable_graph(), "c", rawTensor("c", 2, {4096}));
    auto model = Model::fromProto(std::move(proto), "/nonexistent");
    QCOMPARE(model->tensors().size(), 2u);

    SaveOptions options;
    QVERIFY(options.includeAttributes); // the default
    options.includeAttributes = includeAttributes;
    auto plan = planSave(*model, "/x/m.onnx", options);
    QVERIFY_OK(plan);
    for (size_t i = 0; i < model->tensors().size(); ++i) {
        const bool attribute = model->tensors()[i].kind == TensorKind::Attribute;
        QCOMPARE(plan->tensors[i].external, attribute ? includeAttributes : true);
    }
}

void TestSavePlan::largeTensorsAligned_data()
{
    QTest::addColumn<std::vector<uint64_t>>("sizes");
    QTest::addColumn<quint64>("alignment");
    QTest::addColumn<quint64>("alignThreshold");
    QTest::addColumn<std::vector<uint64_t>>("offsets");
    QTest::addColumn<quint64>("fileBytes");

    // 100 B at 0; 1 MiB aligned up from 100 to 4096; 10 B right after (1052672 is a
    // multiple of 4096 already); 1 MiB + 1 aligned up from 1052682 to 1056768.
    QTest::newRow("default: 1 MiB and up at 4096")
        << std::vector<uint64_t>{100, MiB, 10, MiB + 1} << 4096ull << MiB
        << std::vector<uint64_t>{0, 4096, 1052672, 1056768} << 1056768ull + MiB + 1;
    QTest::newRow("just below 1 MiB stays dense")
        << std::vector<uint64_t>{100, MiB - 1} << 4096ull << MiB << std::vector<uint64_t>{0, 100}
        << 100ull + MiB - 1;
    QTest::newRow("alignment 0 is dense")
        << std::vector<uint64_t>{100, MiB, 10, MiB + 1} << 0ull << MiB
        << std::vector<uint64_t>{0, 100, 100 + MiB, 110 + MiB} << 110 + 2 * MiB + 1;
    QTest::newRow("custom align threshold 64")
        << std::vector<uint64_t>{100, 100, 10, 64} << 4096ull << 64ull
        << std::vector<uint64_t>{0, 4096, 4196, 8192} << 8256ull;
    QTest::newRow("custom alignment 512")
        << std::vector<uint64_t>{3, 2000, 2000} << 512ull << 1000ull
        << std::vector<uint64_t>{0, 512, 2560} << 4560ull;
}

void TestSavePlan::largeTensorsAligned()
{
    QFETCH(std::vector<uint64_t>, sizes);
    QFETCH(quint64, alignment);
    QFETCH(quint64, alignThreshold);
    QFETCH(std::vector<uint64_t>, offsets);
    QFETCH(quint64, fileBytes);

    auto model = uint8Model(sizes);
    SaveOptions options = everythingExternal();
    options.alignment = alignment;
    options.alignThreshold = alignThreshold;
    auto plan = planSave(*model, "/x/m.onnx", options);
    QVERIFY_OK(plan);
    QCOMPARE(offsetsOf(*plan), offsets);
    QCOMPARE(plan->fileBytes, std::vector<uint64_t>{fileBytes});
}

void TestSavePlan::declarationOrderByDefault()
{
    auto model = uint8Model({300, 100, 200});
    auto plan = planSave(*model, "/x/m.onnx", everythingExternal());
    QVERIFY(plan.ok());
    QCOMPARE(plan->fileOrder, (std::vector<std::vector<size_t>>{{0, 1, 2}}));
    QCOMPARE(offsetsOf(*plan), (std::vector<uint64_t>{0, 300, 400}));
}

void TestSavePlan::sizeOrderKeepsTiesInDeclarationOrder()
{
    auto model = uint8Model({300, 100, 200, 100, 300, 50});
    SaveOptions options = everythingExternal();
    options.order = TensorOrder::SizeAscending;
    auto plan = planSave(*model, "/x/m.onnx", options);
    QVERIFY(plan.ok());
    QCOMPARE(plan->fileOrder, (std::vector<std::vector<size_t>>{{5, 1, 3, 2, 0, 4}}));
    // 50 @0, 100 @50, 100 @150, 200 @250, 300 @450, 300 @750
    QCOMPARE(offsetsOf(*plan), (std::vector<uint64_t>{450, 50, 250, 150, 750, 0}));
}

void TestSavePlan::shardNames()
{
    // onnx_ir's rule since 1.1: the index goes before the file name's extension chain (the
    // trailing ".ext" parts that start with a letter), never into a folder; one shard keeps the
    // plain name.
    struct Row {
        const char* data;
        size_t index;
        size_t count;
        const char* expected;
    };
    const Row rows[] = {
        {"w.bin", 0, 3, "w-00001-of-00003.bin"},
        {"w.bin", 2, 3, "w-00003-of-00003.bin"},
        {"model.onnx.data", 0, 2, "model-00001-of-00002.onnx.data"},
        {"qwen2.5.onnx.data", 1, 2, "qwen2.5-00002-of-00002.onnx.data"},
        {"weights.dir/model.onnx.data", 0, 2, "weights.dir/model-00001-of-00002.onnx.data"},
        {"model", 0, 2, "model-00001-of-00002"},
        {"model.onnx_data", 1, 3, "model-00002-of-00003.onnx_data"},
        {"sub/model.onnx.data", 9, 12, "sub/model-00010-of-00012.onnx.data"},
        {"weights", 0, 2, "weights-00001-of-00002"},
        {"v1.2/weights", 1, 2, "v1.2/weights-00002-of-00002"}, // a dot in the folder stays put
        {".hidden.data", 0, 2, ".hidden-00001-of-00002.data"},
        {"w.bin", 0, 1, "w.bin"},
        {"model.onnx.data", 0, 1, "model.onnx.data"},
    };
    for (const Row& row : rows)
        QCOMPARE(QString::fromStdString(shardName(row.data, row.index, row.count)),
            QString::fromLatin1(row.expected));
}

void TestSavePlan::shardsSplitAtLimit_data()
{
    QTest::addColumn<std::vector<uint64_t>>("sizes");
    QTest::addColumn<quint64>("shardSize");
    QTest::addColumn<std::vector<uint64_t>>("shardOf"); // per tensor
    QTest::addColumn<QStringList>("files");

    QTest::newRow("third tensor starts shard two")
        << std::vector<uint64_t>{400, 400, 400} << 1000ull << std::vector<uint64_t>{0, 0, 1}
        << QStringList{"w-00001-of-00002.bin", "w-00002-of-00002.bin"};
    QTest::newRow("exactly full shard")
        << std::vector<uint64_t>{500, 500, 1} << 1000ull << std::vector<uint64_t>{0, 0, 1}
        << QStringList{"w-00001-of-00002.bin", "w-00002-of-00002.bin"};
    QTest::newRow("oversized tensor gets its own shard")
        << std::vector<uint64_t>{100, 5000, 100} << 1000ull << std::vector<uint64_t>{0, 1, 2}
        << QStringList{"w-00001-of-00003.bin", "w-00002-of-00003.bin", "w-00003-of-00003.bin"};
    QTest::newRow("oversized first tensor")
        << std::vector<uint64_t>{5000, 100, 100} << 1000ull << std::vector<uint64_t>{0, 1, 1}
        << QStringList{"w-00001-of-00002.bin", "w-00002-of-00002.bin"};
    QTest::newRow("one shard keeps the plain name")
        << std::vector<uint64_t>{100, 100} << 1000ull << std::vector<uint64_t>{0, 0}
        << QStringList{"w.bin"};
}

void TestSavePlan::shardsSplitAtLimit()
{
    QFETCH(std::vector<uint64_t>, sizes);
    QFETCH(quint64, shardSize);
    QFETCH(std::vector<uint64_t>, shardOf);
    QFETCH(QStringList, files);

    auto model = uint8Model(sizes);
    SaveOptions options = everythingExternal();
    options.dataFile = "w.bin";
    options.alignment = 0;
    options.shardSize = shardSize;
    auto plan = planSave(*model, "/x/m.onnx", options);
    QVERIFY_OK(plan);
    QStringList names;
    for (const auto& f : plan->files)
        names << QString::fromStdString(f);
    QCOMPARE(names, files);
    for (size_t i = 0; i < sizes.size(); ++i)
        QCOMPARE(uint64_t(plan->tensors[i].file), shardOf[i]);
    // No shard holding more than one tensor passes the limit.
    for (size_t f = 0; f < plan->files.size(); ++f)
        if (plan->fileOrder[f].size() > 1)
            QVERIFY(plan->fileBytes[f] <= shardSize);
}

void TestSavePlan::explicitPlanOverridesThreshold()
{
    auto model = uint8Model({10, 5000, 5000, 10});
    SaveOptions options;
    options.placements
        = {{Placement::External}, {Placement::Inline}, {Placement::Auto}, {Placement::Auto}};
    auto plan = planSave(*model, "/x/m.onnx", options);
    QVERIFY_OK(plan);
    QCOMPARE(plan->tensors[0].external, true); // forced out, though below the threshold
    QCOMPARE(plan->tensors[1].external, false); // forced in, though above
    QCOMPARE(plan->tensors[2].external, true); // rule
    QCOMPARE(plan->tensors[3].external, false); // rule
    QCOMPARE(plan->externalBytes, 5010u);
    QCOMPARE(plan->inlineBytes, 5010u);
}

// SPEC 5b: a tensor pinned to a named data file goes there; unpinned external tensors (and
// those pinned to the save's own data file) go to the data file; named files come after it.
void TestSavePlan::pinnedFilesGetTheirTensors()
{
    auto model = uint8Model({5000, 6000, 7000, 10, 8000});
    SaveOptions options;
    options.dataFile = "w.bin";
    options.alignment = 0;
    options.placements
        = {{Placement::External, "extra.bin"}, {Placement::Auto}, {Placement::External, "w.bin"},
            {Placement::External, "extra.bin"}, {Placement::External, "sub/other.bin"}};
    auto plan = planSave(*model, "/x/m.onnx", options);
    QVERIFY_OK(plan);
    QCOMPARE(plan->files, (std::vector<std::string>{"w.bin", "extra.bin", "sub/other.bin"}));
    const std::vector<int> file{1, 0, 0, 1, 2};
    const std::vector<uint64_t> offset{0, 0, 6000, 5000, 0};
    for (size_t i = 0; i < file.size(); ++i) {
        QVERIFY(plan->tensors[i].external);
        QCOMPARE(plan->tensors[i].file, file[i]);
        QCOMPARE(plan->tensors[i].offset, offset[i]);
    }
    QCOMPARE(plan->fileBytes, (std::vector<uint64_t>{13000, 5010, 8000}));
}

void TestSavePlan::pinnedFileNamesAreChecked_data()
{
    QTest::addColumn<QString>("location");
    QTest::newRow("escapes the folder") << "../x.bin";
    QTest::newRow("absolute") << "/tmp/x.bin";
    QTest::newRow("a folder") << "sub/";
    QTest::newRow("a shard's name") << "w-00001-of-00002.bin";
}

void TestSavePlan::pinnedFileNamesAreChecked()
{
    QFETCH(QString, location);
    auto model = uint8Model({5000, 6000, 7000});
    SaveOptions options;
    options.dataFile = "w.bin";
    options.shardSize = 8000;
    options.placements
        = {{Placement::Auto}, {Placement::Auto}, {Placement::External, location.toStdString()}};
    auto plan = planSave(*model, "/x/m.onnx", options);
    QVERIFY_FAILS_WITH(plan, "data file '" + location.toStdString() + "'");
}

void TestSavePlan::allInlinePast2GiBFails()
{
    // Three 800 MiB tensors in a sparse data file: 2.34 GiB referenced, nothing really written.
    QTemporaryDir dir;
    const QString path = writeSparseModel(dir.path(), "big.onnx", 3, 800 * MiB, "big.bin");
    QVERIFY(!path.isEmpty());
    auto model = loadModel(path);
    QVERIFY(model);
    QVERIFY(!model->hasErrors());

    SaveOptions external;
    auto ok = planSave(*model, path.toStdString(), external);
    QVERIFY_OK(ok);
    QCOMPARE(ok->externalBytes, 3 * 800 * MiB);

    SaveOptions allInline;
    allInline.allInline = true;
    auto plan = planSave(*model, path.toStdString(), allInline);
    QVERIFY(!plan.ok());
    QVERIFY2(plan.error().message.find("2 GiB") != std::string::npos, plan.error().message.c_str());

    // The same through the threshold rule: nothing reaches 4 GiB, so all would stay inline.
    SaveOptions highThreshold;
    highThreshold.threshold = 4 * GiB;
    QVERIFY_FAILS_WITH(planSave(*model, path.toStdString(), highThreshold), "2 GiB");
}

void TestSavePlan::dataFileOutsideFolderFails_data()
{
    QTest::addColumn<QString>("dataFile");
    QTest::newRow("absolute") << "/tmp/weights.data";
    QTest::newRow("parent folder") << "../weights.data";
    QTest::newRow("escapes through a subfolder") << "sub/../../weights.data";
    QTest::newRow("only dots") << "..";
}

void TestSavePlan::dataFileOutsideFolderFails()
{
    QFETCH(QString, dataFile);
    auto model = uint8Model({5000});
    SaveOptions options;
    options.dataFile = dataFile.toStdString();
    auto plan = planSave(*model, "/x/m.onnx", options);
    QVERIFY(!plan.ok());
    QVERIFY2(plan.error().message.find(dataFile.toStdString()) != std::string::npos,
        plan.error().message.c_str());
}

// diffPlan: each tensor's change between the layout now and a plan, and each file's; built
// from plain data, the way the GUI gives it its snapshot.
void TestSavePlan::planDiffSaysWhatChanges()
{
    auto ext = [](std::string location, uint64_t offset, uint64_t length) {
        return TensorPlace{true, std::move(location), offset, length};
    };
    const std::vector<TensorBefore> before{
        {"graph", "same", 100, ext("w.bin", 0, 100)},
        {"graph", "shifted", 100, ext("./w.bin", 100, 100)}, // "./w.bin" is w.bin
        {"graph", "renamed", 100, ext("old.bin", 0, 100)},
        {"graph", "small", 50, {false, {}, 0, 50}},
        {"graph", "comes_in", 30, ext("w.bin", 200, 30)},
        {"graph", "goes_out", 70, {false, {}, 0, 70}},
    };
    std::vector<FileLayout> layouts(2);
    layouts[0].location = "w.bin";
    layouts[0].bytes = 300;
    layouts[0].paddingBytes = 70;
    layouts[1].location = "old.bin";
    layouts[1].bytes = 100;
    SavePlan plan;
    plan.files = {"w.bin", "new.bin"};
    plan.tensors
        = {{true, 0, 0, 100}, {true, 0, 4096, 100}, {true, 1, 0, 100}, {}, {}, {true, 0, 8192, 70}};
    plan.fileOrder = {{0, 1, 5}, {2}};
    plan.fileBytes = {8262, 100};
    plan.alignment = 4096; // the gaps before 4096 and 8192 are what it asks for

    const PlanDiff diff = diffPlan(before, layouts, plan);
    QCOMPARE(diff.tensors.size(), before.size());
    const std::vector<ChangeKind> kinds{ChangeKind::Unchanged, ChangeKind::Moved,
        ChangeKind::NewFile, ChangeKind::Unchanged, ChangeKind::ToInline, ChangeKind::ToExternal};
    for (size_t i = 0; i < kinds.size(); ++i)
        QVERIFY2(diff.tensors[i].kind == kinds[i], diff.tensors[i].name.c_str());
    QCOMPARE(diff.tensors[1].before.offset, uint64_t(100));
    QCOMPARE(diff.tensors[1].after.offset, uint64_t(4096));
    QCOMPARE(diff.tensors[2].after.location, std::string("new.bin"));
    QCOMPARE(diff.tensors[4].after.length, uint64_t(30)); // inline: the tensor's size
    QCOMPARE(diff.toInlineBytes, uint64_t(30));
    QCOMPARE(diff.toExternalBytes, uint64_t(70));
    QVERIFY(!diff.changesNothing());

    QCOMPARE(diff.files.size(), size_t(3)); // by location: new.bin, old.bin, w.bin
    QCOMPARE(planFileChange(diff.files[0]), "new");
    QCOMPARE(planFileChange(diff.files[1]), "unused");
    QCOMPARE(diff.files[2].location, std::string("w.bin"));
    QCOMPARE(planFileChange(diff.files[2]), "resized");
    QCOMPARE(diff.files[2].bytesBefore, uint64_t(300));
    QCOMPARE(diff.files[2].paddingAfter, uint64_t(8262 - 270));

    // The layout as it is: nothing changes.
    SavePlan same;
    same.files = {"w.bin"};
    same.tensors = {{true, 0, 0, 100}, {true, 0, 100, 100}};
    same.fileOrder = {{0, 1}};
    same.fileBytes = {300};
    const std::vector<TensorBefore> two(before.begin(), before.begin() + 2);
    const std::vector<FileLayout> one(layouts.begin(), layouts.begin() + 1);
    QVERIFY(diffPlan(two, one, same).changesNothing());
    same.fileBytes = {200}; // the same places, but orphaned bytes at the end go
    QVERIFY(!diffPlan(two, one, same).changesNothing());
}

QTEST_GUILESS_MAIN(TestSavePlan)
#include "tst_save_plan.moc"
