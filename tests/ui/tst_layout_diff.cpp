// Visual diffs of storage layouts: the before/after data of a pending repack is exactly what
// planSave plans, the A/B data of two models gives every kind of change, the diff table passes
// QAbstractItemModelTester, and the compare window shows the layout first, compares bytes on a
// worker, filters by kind and shares one selection between its map and its table.
#include "ui_fixtures.h"

#include "ui/models/diff_table_model.h"
#include "ui/models/layout_diff.h"
#include "ui/models/model_snapshot.h"
#include "ui/save/save_preview.h"
#include "ui/util/byte_format.h"
#include "ui/util/settings_store.h"
#include "ui/views/layout_diff_view.h"
#include "ui/views/layout_map_view.h"
#include "ui/views/layout_palette.h"
#include "ui/views/repack_panel.h"
#include "ui/windows/compare_window.h"
#include "ui/windows/main_window.h"

#include "core/inspect/diff.h"
#include "core/model/model.h"
#include "core/plan/save_plan.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QDockWidget>
#include <QDropEvent>
#include <QLabel>
#include <QMimeData>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>

using ui::ChangeKind;

namespace {

std::string fsPath(const QString& path)
{
    return path.toStdString();
}

// "i0" inline (16 bytes); a.bin holds t_a1 (4096 bytes) and t_a2 (2048); b.bin holds t_b1 (1024).
bool writeTwoFileModel(const QString& dir)
{
    onnx::ModelProto model = fixtures::emptyModel();
    onnx::GraphProto& graph = *model.mutable_graph();
    fixtures::DataFileBuilder a("a.bin");
    fixtures::DataFileBuilder b("b.bin");
    *graph.add_initializer() = fixtures::rawTensor("i0", onnx::TensorProto::FLOAT, {4});
    auto add = [&](const char* name, int64_t floats, fixtures::DataFileBuilder& file) {
        onnx::TensorProto t = fixtures::rawTensor(name, onnx::TensorProto::FLOAT, {floats},
            fixtures::patternBytes(uint64_t(floats) * 4, uint8_t(floats % 200)));
        file.append(t, 4096);
        *graph.add_initializer() = t;
    };
    add("t_a1", 1024, a);
    add("t_a2", 512, a);
    add("t_b1", 256, b);
    return a.save(dir) && b.save(dir)
        && fixtures::saveModel(model, QDir(dir).filePath(QStringLiteral("model.onnx")));
}

// One data file "weights.bin" of 182 tensors of 4 KiB; planned with 8 KiB shards of "w.bin",
// two tensors a shard: 91 new data files, as a 1 GiB model saved in 11 MiB shards would have.
constexpr int kShardTensors = 182;
constexpr uint64_t kShardSize = 8192;
constexpr size_t kShardCount = 91;

bool writeManyTensorModel(const QString& dir)
{
    onnx::ModelProto model = fixtures::emptyModel();
    fixtures::DataFileBuilder data("weights.bin");
    for (int i = 0; i < kShardTensors; ++i) {
        onnx::TensorProto t = fixtures::rawTensor("t" + std::to_string(i), onnx::TensorProto::FLOAT,
            {1024}, fixtures::patternBytes(4096, uint8_t(i)));
        data.append(t);
        *model.mutable_graph()->add_initializer() = t;
    }
    return data.save(dir)
        && fixtures::saveModel(model, QDir(dir).filePath(QStringLiteral("model.onnx")));
}

struct ManyShardPlan {
    QTemporaryDir dir;
    std::unique_ptr<repack::Model> model;
    repack::SavePlan plan;
};

// writeManyTensorModel's model, loaded and planned into shards; null when a step fails.
std::unique_ptr<ManyShardPlan> planManyShards()
{
    auto shards = std::make_unique<ManyShardPlan>();
    if (!writeManyTensorModel(shards->dir.path()))
        return nullptr;
    const std::string path = fsPath(shards->dir.filePath(QStringLiteral("model.onnx")));
    auto model = repack::Model::load(path);
    if (!model)
        return nullptr;
    shards->model = std::move(model.value());
    repack::SaveOptions options;
    options.dataFile = "w.bin";
    options.shardSize = kShardSize;
    auto plan = repack::planSave(*shards->model, path, options);
    if (!plan)
        return nullptr;
    shards->plan = std::move(plan.value());
    return shards;
}

QScrollArea* enclosingScrollArea(QWidget* widget)
{
    for (QWidget* w = widget; w; w = w->parentWidget()) {
        if (auto* area = qobject_cast<QScrollArea*>(w))
            return area;
    }
    return nullptr;
}

int indexOf(const ui::LayoutDiff& diff, const QString& name)
{
    for (size_t i = 0; i < diff.tensors.size(); ++i) {
        if (diff.tensors[i].name == name)
            return int(i);
    }
    return -1;
}

// Every tensor's "after" place is the plan's, every "before" place the snapshot's; every file
// lane has the plan's size and its tensors in the plan's order.
void verifyMatchesPlan(
    const ui::LayoutDiff& diff, const ui::ModelSnapshot& snap, const repack::SavePlan& plan)
{
    QCOMPARE(diff.tensors.size(), plan.tensors.size());
    QCOMPARE(qsizetype(diff.tensors.size()), snap.tensors.size());
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
        const ui::DiffTensor& t = diff.tensors[i];
        const repack::PlannedTensor& p = plan.tensors[i];
        const ui::TensorRow& row = snap.tensors[qsizetype(i)];
        QCOMPARE(t.name, row.name);
        QCOMPARE(t.after.row, int(i));
        QCOMPARE(t.after.external, p.external);
        QVERIFY(t.after.lane >= 0);
        const ui::DiffLane& lane = diff.lanes[size_t(t.after.lane)];
        if (p.external) {
            QCOMPARE(lane.location, QString::fromStdString(plan.files[size_t(p.file)]));
            QCOMPARE(t.after.storage, QString::fromStdString(plan.files[size_t(p.file)]));
            QCOMPARE(t.after.offset, p.offset);
            QCOMPARE(t.after.length, p.length);
        } else {
            QVERIFY(lane.isInline);
        }
        QCOMPARE(t.before.external, row.external);
        if (row.external) {
            QCOMPARE(diff.lanes[size_t(t.before.lane)].location, row.storage);
            QCOMPARE(t.before.offset, row.offset);
            QCOMPARE(t.before.length, row.length);
        } else {
            QVERIFY(diff.lanes[size_t(t.before.lane)].isInline);
        }
    }
    for (size_t f = 0; f < plan.files.size(); ++f) {
        const auto lane = std::find_if(diff.lanes.begin(), diff.lanes.end(),
            [&](const ui::DiffLane& l) { return l.location.toStdString() == plan.files[f]; });
        QVERIFY(lane != diff.lanes.end());
        QVERIFY(lane->after.present);
        QCOMPARE(lane->after.bytes, plan.fileBytes[f]);
        QCOMPARE(lane->after.tensors.size(), plan.fileOrder[f].size());
        for (size_t k = 0; k < plan.fileOrder[f].size(); ++k)
            QCOMPARE(size_t(lane->after.tensors[k]), plan.fileOrder[f][k]);
    }
    // No lane claims a file after the save that the plan does not write.
    for (const ui::DiffLane& lane : diff.lanes) {
        if (!lane.isInline && lane.after.present)
            QVERIFY(std::find(plan.files.begin(), plan.files.end(), lane.location.toStdString())
                != plan.files.end());
    }
}

} // namespace

Q_DECLARE_METATYPE(std::function<void(repack::SaveOptions&)>)

class TestLayoutDiff : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("onnx-repack-tests"));
    }

    void init() { ui::writeSettings({{QStringLiteral("modelOptions"), QVariantMap()}}); }

    void beforeAfterMatchesPlan_data()
    {
        using Options = std::function<void(repack::SaveOptions&)>;
        QTest::addColumn<Options>("options");
        QTest::addColumn<QStringList>("expected"); // "tensor=kind"
        QTest::addRow("moves between files (pins)")
            << Options([](repack::SaveOptions& o) {
                   o.dataFile = "a.bin";
                   o.placements.assign(4, {});
                   o.placements[1] = {repack::Placement::External, "b.bin"}; // t_a1
                   o.placements[3] = {repack::Placement::External, "a.bin"}; // t_b1
               })
            << QStringList{QStringLiteral("t_a1=moved"), QStringLiteral("t_b1=moved"),
                   QStringLiteral("i0=unchanged")};
        QTest::addRow("to inline") << Options([](repack::SaveOptions& o) {
            o.dataFile = "a.bin";
            o.threshold = 1 << 20;
        }) << QStringList{QStringLiteral("t_a1=to inline"), QStringLiteral("t_b1=to inline")};
        QTest::addRow("to external") << Options([](repack::SaveOptions& o) {
            o.dataFile = "a.bin";
            o.threshold = 16;
        }) << QStringList{QStringLiteral("i0=to external"), QStringLiteral("t_a1=moved")};
        QTest::addRow("new shards")
            << Options([](repack::SaveOptions& o) {
                   o.dataFile = "w.bin";
                   o.shardSize = 4096;
               })
            << QStringList{QStringLiteral("t_a1=new file"), QStringLiteral("t_a2=new file"),
                   QStringLiteral("t_b1=new file")};
        QTest::addRow("size order, dense") << Options([](repack::SaveOptions& o) {
            o.dataFile = "a.bin";
            o.alignment = 0;
            o.order = repack::TensorOrder::SizeAscending;
        }) << QStringList{QStringLiteral("t_b1=moved"), QStringLiteral("t_a2=moved")};
    }

    void beforeAfterMatchesPlan()
    {
        QFETCH(std::function<void(repack::SaveOptions&)>, options);
        QFETCH(QStringList, expected);
        QTemporaryDir dir;
        QVERIFY(writeTwoFileModel(dir.path()));
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        auto model = repack::Model::load(fsPath(path));
        QVERIFY(model);
        repack::SaveOptions o;
        options(o);
        auto plan = repack::planSave(**model, fsPath(path), o);
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        const ui::ModelSnapshot snap = ui::takeSnapshot(**model);
        const ui::LayoutDiff diff = ui::beforeAfterDiff(snap, *plan);
        verifyMatchesPlan(diff, snap, *plan);
        if (QTest::currentTestFailed())
            return;
        for (const QString& item : expected) {
            const QStringList parts = item.split(u'=');
            const int t = indexOf(diff, parts[0]);
            QVERIFY2(t >= 0, qPrintable(parts[0]));
            QCOMPARE(ui::changeKindName(diff.tensors[size_t(t)].kind), parts[1]);
        }
        // Padding of each file after the save: its bytes less its tensors.
        for (const ui::DiffLane& lane : diff.lanes) {
            if (lane.isInline || !lane.after.present)
                continue;
            uint64_t used = 0;
            for (int t : lane.after.tensors)
                used += diff.tensors[size_t(t)].after.length;
            QCOMPARE(lane.after.padding, lane.after.bytes - used);
        }
    }

    // The main window's Before / after dock shows planSave of the panel's options.
    void beforeAfterDockFollowsOptions()
    {
        QTemporaryDir dir;
        QVERIFY(writeTwoFileModel(dir.path()));
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy opened(&window, &ui::MainWindow::modelOpened);
        QVERIFY(window.openFile(path, true));
        QVERIFY(opened.wait(30000));
        auto* dock = window.findChild<QDockWidget*>(QStringLiteral("beforeAfterDock"));
        QVERIFY(dock);
        dock->show();
        dock->raise();
        ui::BeforeAfterPanel* panel = window.beforeAfter();
        QTRY_VERIFY(!window.isPlanning()); // the plan of the options at open is in
        QTRY_VERIFY(!panel->isPending());

        QSignalSpy updated(panel, &ui::BeforeAfterPanel::updated);
        window.repackPanel()->restoreSettings({
            {QStringLiteral("repack/keep"), false}, // the rule, not the layout on disk
            {QStringLiteral("repack/threshold"), QVariant::fromValue<qulonglong>(2048)},
            {QStringLiteral("repack/shardSize"), QVariant::fromValue<qulonglong>(4096)},
        });
        QVERIFY(updated.wait(10000));
        QTRY_VERIFY(!panel->isPending());
        const ui::LayoutDiff* shown = panel->view()->diff();
        QVERIFY(shown);

        auto model = repack::Model::load(fsPath(path));
        QVERIFY(model);
        repack::SaveOptions options = *window.repackPanel()->options();
        QCOMPARE(options.shardSize, uint64_t(4096));
        auto plan = repack::planSave(**model, fsPath(window.snapshot().path), options);
        QVERIFY(plan);
        verifyMatchesPlan(*shown, window.snapshot(), *plan);
        QCOMPARE(shown->tensors[size_t(indexOf(*shown, QStringLiteral("t_b1")))].kind,
            ChangeKind::ToInline);

        // Clicking a tensor's new range selects its row in the window's table.
        const int tensor = indexOf(*shown, QStringLiteral("t_a1"));
        panel->view()->resize(900, 600);
        const QPoint at = panel->view()->rangeCenter(tensor, true);
        QVERIFY(at.x() >= 0);
        QCOMPARE(panel->view()->tensorAt(at), tensor);
        QTest::mouseClick(panel->view()->viewport(), Qt::LeftButton, {}, at);
        const QModelIndexList rows = window.tensorView()->selectionModel()->selectedRows();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].data().toString(), QStringLiteral("t_a1"));
        QVERIFY(panel->view()->isHighlighted(tensor));
    }

    // A byte count never wraps apart from its unit ("6.84" at the end of one line, "GiB" at the
    // start of the next): number and unit are joined by a non-breaking space.
    void byteCountsKeepTheirUnit()
    {
        const QRegularExpression breakable(QStringLiteral("\\d[ \\t\\n]+(B|KiB|MiB|GiB|TiB)\\b"));
        for (uint64_t bytes :
            {uint64_t(0), uint64_t(512), uint64_t(7344394650), uint64_t(1) << 40}) {
            const QString text = ui::formatBytes(bytes);
            QVERIFY2(!text.contains(u' '), qPrintable(text));
            QVERIFY2(text.contains(QChar::Nbsp), qPrintable(text));
        }
        const auto shards = planManyShards();
        QVERIFY(shards);
        QCOMPARE(shards->plan.files.size(), kShardCount);
        const QString preview = ui::describePlan(shards->plan, ui::takeSnapshot(*shards->model));
        QVERIFY2(
            !breakable.match(preview).hasMatch(), qPrintable(breakable.match(preview).captured()));
    }

    // Issue 27 item 6: the preview and the Before / after tab describe one plan in one way: a
    // move into a data file that does not exist yet is "to a new data file" in both, not a
    // move "within their data files"; a move inside one file is said so.
    void previewAgreesWithBeforeAfter()
    {
        QTemporaryDir dir;
        QVERIFY(writeTwoFileModel(dir.path()));
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        auto model = repack::Model::load(fsPath(path));
        QVERIFY(model);
        const ui::ModelSnapshot snap = ui::takeSnapshot(**model);
        repack::SaveOptions o;
        o.threshold = 1;
        o.dataFile = "weights.bin";
        auto plan = repack::planSave(**model, fsPath(path), o);
        QVERIFY(plan);
        const ui::LayoutDiff diff = ui::beforeAfterDiff(snap, *plan);
        int newFile = 0;
        for (const auto& t : diff.tensors)
            newFile += t.kind == repack::ChangeKind::NewFile;
        QCOMPARE(newFile, 3);
        const QString preview = ui::describePlan(*plan, snap);
        QVERIFY2(preview.contains(QStringLiteral("3 external tensor(s) move to a new data file"))
                && !preview.contains(QStringLiteral("within")),
            qPrintable(preview));

        // Into a.bin, which exists, aligned further apart: t_b1 moves over from b.bin, t_a2
        // moves within a.bin.
        o.dataFile = "a.bin";
        o.alignment = 65536;
        o.alignThreshold = 1;
        auto existing = repack::planSave(**model, fsPath(path), o);
        QVERIFY(existing);
        const QString moved = ui::describePlan(*existing, snap);
        QVERIFY2(!moved.contains(QStringLiteral("new data file"))
                && moved.contains(QStringLiteral("1 external tensor(s) move to another existing"))
                && moved.contains(QStringLiteral("within their data file")),
            qPrintable(moved));
    }

    // The repack panel's preview of a 91-shard plan names every file: when the list is taller
    // than the panel it scrolls, with a scroll bar, instead of being cut off mid-line.
    void manyShardPreviewScrolls()
    {
        const auto shards = planManyShards();
        QVERIFY(shards);
        const QString preview = ui::describePlan(shards->plan, ui::takeSnapshot(*shards->model));
        for (const std::string& file : shards->plan.files)
            QVERIFY(preview.contains(QString::fromStdString(file)));

        ui::RepackPanel panel;
        panel.resize(300, 700);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setPreview(preview);
        QLabel* label = panel.previewLabel();
        QScrollArea* area = enclosingScrollArea(label);
        QVERIFY2(area, "the preview is not in a scroll area");
        QTRY_VERIFY(area->verticalScrollBar()->maximum() > 0);
        QVERIFY(area->verticalScrollBar()->isVisible());
        // The label is as tall as its text needs: nothing is cut, the area scrolls over it.
        QTRY_VERIFY(label->height() >= label->heightForWidth(label->width()));
        QVERIFY(area->viewport()->height() < label->height());
        // A short preview needs no scroll bar.
        panel.setPreview(QStringLiteral("No tensor changes storage."));
        QTRY_COMPARE(area->verticalScrollBar()->maximum(), 0);
    }

    // The before/after view of a 91-shard plan: ribbons stay in the bands between bars (they
    // never cross a file's title or a bar's label), every tensor still has one that selects it,
    // and the view scrolls to its last file.
    void manyShardRibbonsNeverCrossLabels()
    {
        const auto shards = planManyShards();
        QVERIFY(shards);
        auto diff = std::make_shared<const ui::LayoutDiff>(
            ui::beforeAfterDiff(ui::takeSnapshot(*shards->model), shards->plan));
        ui::LayoutDiffView view;
        view.resize(900, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setDiff(diff);

        const QList<QRectF> labels = view.labelRects();
        // The header, then a title per lane (inline, weights.bin, 91 shards) and a label per bar.
        QVERIFY(labels.size() >= 1 + 2 * int(kShardCount));
        const QList<QRectF> links = view.linkBounds();
        QVERIFY(links.size() >= kShardTensors);
        int crossings = 0;
        for (const QRectF& link : links) {
            for (const QRectF& label : labels) {
                if (link.intersects(label) && ++crossings <= 3)
                    qWarning() << "ribbon" << link << "crosses label" << label;
            }
        }
        QCOMPARE(crossings, 0);
        for (int t = 0; t < kShardTensors; ++t) {
            const QPoint at = view.ribbonPoint(t);
            QVERIFY2(at.x() >= 0, qPrintable(diff->tensors[size_t(t)].name));
            QCOMPARE(view.tensorAt(at), t);
        }

        QScrollBar* bar = view.verticalScrollBar();
        QVERIFY(bar->maximum() > 0);
        QTRY_VERIFY(bar->isVisible()); // shown once the event loop has run
        bar->setValue(bar->maximum());
        const QRectF last = view.labelRects().constLast();
        QVERIFY(last.bottom() <= view.viewport()->height());
        QVERIFY(last.top() >= 0);
    }

    // The layout map and the diff views (preview, compare window) draw padding, orphaned bytes
    // and headers in one colour each: both legends name the colours their views paint with, and
    // a diff gap takes the colour of the map's region of the same kind.
    void mapAndDiffShareOnePalette()
    {
        auto diff = std::make_shared<ui::LayoutDiff>();
        ui::DiffLane lane;
        lane.after.present = true;
        lane.after.gaps.push_back({0, 64, false, true});
        diff->lanes.push_back(lane);
        ui::LayoutDiffView view;
        view.setDiff(diff);
        auto colourOf = [](const QList<ui::LegendEntry>& legend, const QString& text) {
            for (const ui::LegendEntry& entry : legend) {
                if (entry.text == text)
                    return entry.color;
            }
            return QColor();
        };
        const QList<ui::LegendEntry> map = ui::LayoutMapView::legend();
        const QList<ui::LegendEntry> diffLegend = view.legend();
        QVERIFY(colourOf(map, QStringLiteral("padding")).isValid());
        QCOMPARE(colourOf(diffLegend, QStringLiteral("padding")),
            colourOf(map, QStringLiteral("padding")));
        QCOMPARE(colourOf(diffLegend, QStringLiteral("orphaned")),
            colourOf(map, QStringLiteral("orphaned")));
        QCOMPARE(colourOf(diffLegend, QStringLiteral("safetensors header")),
            colourOf(map, QStringLiteral("header")));
        ui::DiffGap gap;
        QCOMPARE(ui::colors::gapColor(gap), ui::colors::regionColor(repack::RegionType::Padding));
        gap.orphaned = true;
        QCOMPARE(ui::colors::gapColor(gap), ui::colors::regionColor(repack::RegionType::Orphaned));
    }

    void compareDataHasEveryKind()
    {
        QTemporaryDir dirA;
        QTemporaryDir dirB;
        QVERIFY(uifixtures::writeComparePair(dirA.path(), dirB.path()));
        auto a = repack::Model::load(fsPath(dirA.filePath(QStringLiteral("m.onnx"))));
        auto b = repack::Model::load(fsPath(dirB.filePath(QStringLiteral("m.onnx"))));
        QVERIFY(a && b);
        const ui::ModelSnapshot snapA = ui::takeSnapshot(**a);
        const ui::ModelSnapshot snapB = ui::takeSnapshot(**b);
        repack::DiffOptions quick;
        quick.compareContent = false;
        auto storageOnly = repack::diffModels(**a, **b, quick);
        QVERIFY(storageOnly);
        ui::LayoutDiff diff = ui::compareDiff(snapA, snapB, *storageOnly, false);
        QCOMPARE(diff.tensors.size(), size_t(7));
        auto kindOf = [&](const char* name) {
            return diff.tensors[size_t(indexOf(diff, QString::fromLatin1(name)))];
        };
        QCOMPARE(kindOf("same").kind, ChangeKind::Unchanged);
        QCOMPARE(kindOf("inl_same").kind, ChangeKind::Unchanged);
        QCOMPARE(kindOf("moved").kind, ChangeKind::Moved);
        QCOMPARE(kindOf("toinline").kind, ChangeKind::ToInline);
        QCOMPARE(kindOf("removed").kind, ChangeKind::Removed);
        QCOMPARE(kindOf("added").kind, ChangeKind::Added);
        // Same size, bytes not read yet.
        QCOMPARE(kindOf("content").kind, ChangeKind::Unchanged);
        QVERIFY(kindOf("content").contentPending);
        QVERIFY(!kindOf("added").contentPending);

        // Places: A's and B's offsets, the inline lane for inline tensors, nothing for absent.
        QCOMPARE(kindOf("moved").before.offset, uint64_t(1024));
        QCOMPARE(kindOf("moved").after.offset, uint64_t(4096));
        QCOMPARE(diff.lanes[size_t(kindOf("moved").after.lane)].location, QStringLiteral("w.bin"));
        QVERIFY(diff.lanes[size_t(kindOf("toinline").after.lane)].isInline);
        QCOMPARE(kindOf("removed").after.lane, -1);
        QCOMPARE(kindOf("added").before.lane, -1);
        QCOMPARE(diff.protobufBefore, snapA.protobufBytes);
        QCOMPARE(diff.protobufAfter, snapB.protobufBytes);

        auto full = repack::diffModels(**a, **b);
        QVERIFY(full);
        const std::vector<int> changed = ui::applyContentDiff(diff, *full);
        QCOMPARE(kindOf("content").kind, ChangeKind::ContentChanged);
        QVERIFY(!kindOf("content").contentPending);
        QCOMPARE(kindOf("same").kind, ChangeKind::Unchanged);
        QVERIFY(std::find(changed.begin(), changed.end(), indexOf(diff, QStringLiteral("content")))
            != changed.end());
        // The whole-file lane: A's w.bin has no gaps; B's has A's old ranges as a gap.
        const auto lane = std::find_if(diff.lanes.begin(), diff.lanes.end(),
            [](const ui::DiffLane& l) { return l.location == QLatin1String("w.bin"); });
        QVERIFY(lane != diff.lanes.end());
        QCOMPARE(lane->before.bytes, uint64_t(5 * 1024));
        QCOMPARE(lane->after.bytes, uint64_t(6 * 1024));
        QCOMPARE(lane->before.tensors.size(), size_t(5));
        QCOMPARE(lane->after.tensors.size(), size_t(4));
    }

    // Issue 27 item 8: Ctrl+W closes the Compare window; Esc stops a running compare first,
    // then closes it.
    void compareWindowClosesWithCtrlWAndEsc()
    {
        QTemporaryDir dirA;
        QTemporaryDir dirB;
        QVERIFY(uifixtures::writeComparePair(dirA.path(), dirB.path()));
        ui::CompareWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTest::keyClick(&window, Qt::Key_W, Qt::ControlModifier);
        QTRY_VERIFY(!window.isVisible());

        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy finished(&window, &ui::CompareWindow::finished);
        window.compare(
            dirA.filePath(QStringLiteral("m.onnx")), dirB.filePath(QStringLiteral("m.onnx")));
        QVERIFY(window.isRunning());
        QTest::keyClick(&window, Qt::Key_Escape);
        QVERIFY(window.isVisible()); // a running compare is stopped, not the window closed
        QVERIFY(finished.wait(30000) || !window.isRunning());
        QTRY_VERIFY(!window.isRunning());
        QTest::keyClick(&window, Qt::Key_Escape);
        QTRY_VERIFY(!window.isVisible());
    }

    void compareWindowShowsLayoutThenBytes()
    {
        QTemporaryDir dirA;
        QTemporaryDir dirB;
        QVERIFY(uifixtures::writeComparePair(dirA.path(), dirB.path()));
        ui::CompareWindow window;
        QAbstractItemModelTester tester(
            window.diffModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(
            window.filterModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy ready(&window, &ui::CompareWindow::layoutReady);
        QSignalSpy finished(&window, &ui::CompareWindow::finished);
        bool pendingAtFirst = false;
        bool comparedAtFirst = true;
        connect(&window, &ui::CompareWindow::layoutReady, this, [&] {
            const ui::LayoutDiff* diff = window.diffModel()->diff();
            const int content = indexOf(*diff, QStringLiteral("content"));
            pendingAtFirst = diff->tensors[size_t(content)].contentPending;
            comparedAtFirst = window.contentCompared();
        });
        window.compare(
            dirA.filePath(QStringLiteral("m.onnx")), dirB.filePath(QStringLiteral("m.onnx")));
        QVERIFY(window.isRunning());
        QVERIFY(finished.wait(30000));
        QCOMPARE(ready.size(), 1);
        QCOMPARE(finished.size(), 1);
        QCOMPARE(finished[0][0].toBool(), true);
        QVERIFY(pendingAtFirst);
        QVERIFY(!comparedAtFirst);
        QVERIFY(window.contentCompared());
        QVERIFY(!window.isRunning());

        const ui::LayoutDiff* diff = window.diffModel()->diff();
        QCOMPARE(diff->count(ChangeKind::ContentChanged), size_t(1));
        QCOMPARE(window.view()->diff(), diff);

        // Unchanged rows start hidden; each box shows or hides its kinds.
        QCOMPARE(window.filterModel()->rowCount(), 5);
        for (int f = 0; f < ui::CompareWindow::FilterCount; ++f)
            window.filterBox(ui::CompareWindow::Filter(f))->setChecked(false);
        QCOMPARE(window.filterModel()->rowCount(), 0);
        window.filterBox(ui::CompareWindow::ContentChanged)->setChecked(true);
        QCOMPARE(window.filterModel()->rowCount(), 1);
        QCOMPARE(window.filterModel()->index(0, 0).data().toString(), QStringLiteral("content"));
        window.filterBox(ui::CompareWindow::StorageChanged)->setChecked(true);
        window.filterBox(ui::CompareWindow::Moved)->setChecked(true);
        QCOMPARE(window.filterModel()->rowCount(), 3);
        window.filterBox(ui::CompareWindow::Added)->setChecked(true);
        window.filterBox(ui::CompareWindow::Removed)->setChecked(true);
        QCOMPARE(window.filterModel()->rowCount(), 5);
        QVERIFY(window.filterBox(ui::CompareWindow::Unchanged)->text().contains(u'2'));

        // One selection: a click on a range or a ribbon selects the row; a row selected in the
        // table is highlighted in the map.
        QTableView* table = window.table();
        ui::LayoutDiffView* view = window.view();
        const int moved = indexOf(*diff, QStringLiteral("moved"));
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->rangeCenter(moved, true));
        QModelIndexList rows = table->selectionModel()->selectedRows();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].data().toString(), QStringLiteral("moved"));
        QVERIFY(view->isHighlighted(moved));
        const int content = indexOf(*diff, QStringLiteral("content"));
        table->selectionModel()->clearSelection();
        const QPoint ribbon = view->ribbonPoint(content);
        QVERIFY(ribbon.x() >= 0);
        QCOMPARE(view->tensorAt(ribbon), content);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, ribbon);
        rows = table->selectionModel()->selectedRows();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].data().toString(), QStringLiteral("content"));
        const QModelIndex removedRow = window.filterModel()->mapFromSource(
            window.diffModel()->index(indexOf(*diff, QStringLiteral("removed")), 0));
        table->selectionModel()->select(
            removedRow, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QVERIFY(view->isHighlighted(indexOf(*diff, QStringLiteral("removed"))));
        QVERIFY(!view->isHighlighted(content));
        QVERIFY(view->toolTipFor(moved).contains(QStringLiteral("w.bin @ 4096")));

        // A hidden (unchanged) tensor clicked in the map shows its kind and selects it.
        const int same = indexOf(*diff, QStringLiteral("same"));
        QVERIFY(!window.filterBox(ui::CompareWindow::Unchanged)->isChecked());
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->rangeCenter(same, false));
        QVERIFY(window.filterBox(ui::CompareWindow::Unchanged)->isChecked());
        rows = table->selectionModel()->selectedRows();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].data().toString(), QStringLiteral("same"));
    }

    // Cancel while loading: nothing is shown. Cancel once the layout is shown: the byte
    // comparison stops, the storage-only statuses stay.
    void compareWindowCancels()
    {
        QTemporaryDir dirA;
        QTemporaryDir dirB;
        QVERIFY(uifixtures::writeComparePair(dirA.path(), dirB.path()));
        const QString a = dirA.filePath(QStringLiteral("m.onnx"));
        const QString b = dirB.filePath(QStringLiteral("m.onnx"));
        {
            ui::CompareWindow window;
            QSignalSpy finished(&window, &ui::CompareWindow::finished);
            QSignalSpy ready(&window, &ui::CompareWindow::layoutReady);
            window.compare(a, b);
            window.cancel();
            QVERIFY(finished.wait(30000));
            QCOMPARE(finished[0][0].toBool(), false);
            QCOMPARE(ready.size(), 0);
            QCOMPARE(window.diffModel()->rowCount(), 0);
            QVERIFY(!window.isRunning());
        }
        ui::CompareWindow window;
        QSignalSpy finished(&window, &ui::CompareWindow::finished);
        connect(&window, &ui::CompareWindow::layoutReady, &window, &ui::CompareWindow::cancel);
        window.compare(a, b);
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished[0][0].toBool(), false);
        QVERIFY(window.lastError().contains(QStringLiteral("cancelled")));
        QVERIFY(!window.contentCompared());
        const ui::LayoutDiff* diff = window.diffModel()->diff();
        QCOMPARE(window.diffModel()->rowCount(), 7);
        const ui::DiffTensor& content
            = diff->tensors[size_t(indexOf(*diff, QStringLiteral("content")))];
        QVERIFY(content.contentPending);
        QCOMPARE(content.kind, ChangeKind::Unchanged);
    }

    void compareWindowReportsAMissingModel()
    {
        QTemporaryDir dir;
        ui::CompareWindow window;
        QSignalSpy finished(&window, &ui::CompareWindow::finished);
        window.compare(
            dir.filePath(QStringLiteral("none.onnx")), dir.filePath(QStringLiteral("b.onnx")));
        QVERIFY(finished.wait(10000));
        QCOMPARE(finished[0][0].toBool(), false);
        QVERIFY(window.lastError().contains(QStringLiteral("none.onnx")));
        QCOMPARE(window.diffModel()->rowCount(), 0);
    }

    // Dropping a model with Shift held compares it with the open one.
    void shiftDropOpensCompare()
    {
        QTemporaryDir dirA;
        QTemporaryDir dirB;
        QVERIFY(uifixtures::writeComparePair(dirA.path(), dirB.path()));
        ui::MainWindow window;
        QSignalSpy opened(&window, &ui::MainWindow::modelOpened);
        QVERIFY(window.openFile(dirA.filePath(QStringLiteral("m.onnx")), true));
        QVERIFY(opened.wait(30000));
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(dirB.filePath(QStringLiteral("m.onnx")))});
        QDragEnterEvent enter(
            QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::ShiftModifier);
        QApplication::sendEvent(&window, &enter);
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::ShiftModifier);
        QApplication::sendEvent(&window, &drop);
        auto* compare = window.findChild<ui::CompareWindow*>();
        QVERIFY(compare);
        QVERIFY(!window.isLoading()); // the open model stays
        QSignalSpy finished(compare, &ui::CompareWindow::finished);
        QVERIFY(compare->contentCompared() || finished.wait(30000));
        QCOMPARE(compare->diffModel()->rowCount(), 7);
        compare->close();
    }
};

QTEST_MAIN(TestLayoutDiff)
#include "tst_layout_diff.moc"
