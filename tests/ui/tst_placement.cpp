// Drag-and-drop placement (SPEC 5b) in the real window: rows dragged out of the tensor
// table (its model's mimeData) dropped on the Placement pane and on a file's band in the layout
// map pin tensors; every edit undoes and redoes; drops that cannot work (a STRING tensor to a
// data file, past the 2 GiB inline limit, a name aliasing the model) change nothing and say why;
// the keyboard reaches the same edits; a plan exports and imports as SPEC 5b JSON; and a save
// after pinning writes exactly the layout planSave predicted for the same options.
#include "dialog_answerer.h"
#include "ui_fixtures.h"
#include "window_steps.h"

#include "core/model/model.h"
#include "core/plan/save_plan.h"
#include "ui/models/placement_model.h"
#include "ui/models/placement_state.h"
#include "ui/models/tensor_filter_proxy.h"
#include "ui/models/tensor_table_model.h"
#include "ui/save/save_planning.h"
#include "ui/views/layout_map_view.h"
#include "ui/views/placement_view.h"
#include "ui/views/repack_panel.h"
#include "ui/windows/main_window.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QDrag>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListView>
#include <QMenu>
#include <QMimeData>
#include <QMutex>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include <memory>

using repack::Placement;
using repack::TensorPlacement;
using ui::PlacementModel;
using ui::TensorTableModel;

namespace {

using windowsteps::open;
using windowsteps::settled;
using windowsteps::tensorOf;

// Selects the table rows of `names` (the shared selection of table and map).
void select(ui::MainWindow& window, const QStringList& names)
{
    QItemSelection selection;
    for (const QString& name : names) {
        const QModelIndex row = window.tensorProxy()->mapFromSource(
            window.tensorModel()->index(tensorOf(window, name), 0));
        selection.select(row, row);
    }
    window.tensorView()->selectionModel()->select(
        selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

// What dragging the table's selection carries: the view's model (the proxy) asked for the
// selected cells' mime data, as QAbstractItemView::startDrag does.
std::unique_ptr<QMimeData> tableDrag(ui::MainWindow& window)
{
    QTableView* table = window.tensorView();
    return std::unique_ptr<QMimeData>(
        table->model()->mimeData(table->selectionModel()->selectedIndexes()));
}

// Delivers a whole drag (enter, move, drop) at `pos` of `viewport`; true when the drop was
// accepted.
bool dropAt(QWidget* viewport, QPoint pos, const QMimeData* mime)
{
    QDragEnterEvent enter(pos, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(viewport, &enter);
    QDragMoveEvent move(pos, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(viewport, &move);
    if (!move.isAccepted())
        return false;
    QDropEvent drop(QPointF(pos), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(viewport, &drop);
    return drop.isAccepted();
}

int destinationRow(ui::MainWindow& window, PlacementModel::Kind kind, const QString& location = {})
{
    const PlacementModel* model = window.placementView()->model();
    for (int r = 0; r < model->rowCount(); ++r) {
        const QModelIndex index = model->index(r);
        if (index.data(PlacementModel::KindRole).toInt() == int(kind)
            && (location.isEmpty()
                || index.data(PlacementModel::LocationRole).toString() == location))
            return r;
    }
    return -1;
}

// Drops the table's selection on destination row `row` of the Placement pane.
bool dropOnPane(ui::MainWindow& window, int row)
{
    QListView* list = window.placementView()->list();
    const QPoint at = list->visualRect(window.placementView()->model()->index(row)).center();
    const auto mime = tableDrag(window);
    return mime && dropAt(list->viewport(), at, mime.get());
}

QString planned(ui::MainWindow& window, const QString& name)
{
    return window.tensorModel()
        ->index(tensorOf(window, name), TensorTableModel::Planned)
        .data()
        .toString();
}

// A model with a STRING initializer and a float one, both inline.
bool writeStringModel(const QString& dir)
{
    onnx::ModelProto model = fixtures::emptyModel();
    *model.mutable_graph()->add_initializer()
        = fixtures::typedTensor("labels", onnx::TensorProto::STRING, {3});
    *model.mutable_graph()->add_initializer() = fixtures::rawTensor(
        "w", onnx::TensorProto::FLOAT, {512}, fixtures::patternBytes(2048, 9));
    return fixtures::saveModel(model, QDir(dir).filePath(QStringLiteral("strings.onnx")));
}

// Two external tensors of 1.25 GiB each in one sparse data file: either fits inline alone, both
// together pass the 2 GiB limit. No byte of them is ever written.
bool writeHugeModel(const QString& dir)
{
    constexpr int64_t kElements = (5ll << 30) / 4 / 4; // 1.25 GiB of FLOAT
    onnx::ModelProto model = fixtures::emptyModel();
    for (int i = 0; i < 2; ++i) {
        onnx::TensorProto tensor = fixtures::rawTensor(
            "huge" + std::to_string(i), onnx::TensorProto::FLOAT, {kElements}, std::string());
        tensor.clear_raw_data();
        fixtures::setExternal(
            tensor, "huge.bin", std::to_string(i * kElements * 4), std::to_string(kElements * 4));
        *model.mutable_graph()->add_initializer() = tensor;
    }
    QFile data(QDir(dir).filePath(QStringLiteral("huge.bin")));
    return data.open(QIODevice::WriteOnly) && data.resize(2 * kElements * 4)
        && fixtures::saveModel(model, QDir(dir).filePath(QStringLiteral("huge.onnx")));
}

} // namespace

class TestPlacement : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_mixed;

    // A fresh copy of the mixed fixture (small_a, typed_b inline; ext_c, ext_d, ext_e in
    // weights.bin; const_f an attribute).
    QString mixedModel(const QString& sub)
    {
        const QString dir = m_dir.filePath(sub);
        QDir().mkpath(dir);
        if (uifixtures::writeMixedModel(dir).empty())
            return {};
        return QDir(dir).filePath(QStringLiteral("model.onnx"));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("onnx-repack-tests"));
        QVERIFY(m_dir.isValid());
    }

    void destinationsAndModelTesters()
    {
        ui::MainWindow window;
        QAbstractItemModelTester placementTester(window.placementView()->model(),
            QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester tableTester(
            window.tensorModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(open(window, mixedModel(QStringLiteral("destinations"))));
        const PlacementModel* model = window.placementView()->model();
        QCOMPARE(model->rowCount(), 4);
        QCOMPARE(model->index(0).data(PlacementModel::KindRole).toInt(),
            int(PlacementModel::Kind::Inline));
        QCOMPARE(model->index(1).data(PlacementModel::LocationRole).toString(),
            QStringLiteral("model.onnx.data"));
        QCOMPARE(model->index(2).data(PlacementModel::LocationRole).toString(),
            QStringLiteral("weights.bin"));
        QVERIFY(model->index(2).data(PlacementModel::OnDiskRole).toBool());
        QCOMPARE(model->index(3).data(PlacementModel::KindRole).toInt(),
            int(PlacementModel::Kind::NewFile));

        // A pin to a new file adds a row for it, with its count; undo takes it away.
        ui::PlacementState* state = window.placementState();
        QVERIFY(state->pinTo(
            {tensorOf(window, QStringLiteral("ext_c")), tensorOf(window, QStringLiteral("ext_d"))},
            {Placement::External, "extra.data"}));
        QVERIFY(settled(window));
        QCOMPARE(model->rowCount(), 5);
        const int extra
            = destinationRow(window, PlacementModel::Kind::File, QStringLiteral("extra.data"));
        QVERIFY(extra >= 0);
        QCOMPARE(model->index(extra).data(PlacementModel::PinnedCountRole).toInt(), 2);
        QVERIFY(!model->index(extra).data(PlacementModel::OnDiskRole).toBool());
        QVERIFY(model->index(extra).data().toString().contains(QStringLiteral("2 pinned")));
        state->undoStack()->undo();
        QCOMPARE(model->rowCount(), 4);

        // The table's new column: tooltip on the header, empty for unpinned rows.
        QCOMPARE(window.tensorModel()->columnCount(), int(TensorTableModel::ColumnCount));
        QVERIFY(!window.tensorModel()
                     ->headerData(TensorTableModel::Planned, Qt::Horizontal, Qt::ToolTipRole)
                     .toString()
                     .isEmpty());
        QVERIFY(planned(window, QStringLiteral("ext_c")).isEmpty());
        QVERIFY(
            window.tensorModel()->flags(window.tensorModel()->index(0, 0)) & Qt::ItemIsDragEnabled);
        QVERIFY(window.tensorView()->dragEnabled());
    }

    void tableMimeDataCarriesTensorIndices()
    {
        ui::MainWindow window;
        QVERIFY(open(window, mixedModel(QStringLiteral("mime"))));
        window.tensorView()->sortByColumn(TensorTableModel::Size, Qt::DescendingOrder);
        select(window, {QStringLiteral("typed_b"), QStringLiteral("ext_d")});
        const auto mime = tableDrag(window);
        QVERIFY(mime);
        QVERIFY(mime->hasFormat(QString::fromLatin1(TensorTableModel::kMimeType)));
        QList<int> expected{
            tensorOf(window, QStringLiteral("typed_b")), tensorOf(window, QStringLiteral("ext_d"))};
        std::sort(expected.begin(), expected.end());
        QCOMPARE(TensorTableModel::tensorsFromMime(mime.get(), window.currentPath()), expected);
        // Rows of another model are not this one's.
        QVERIFY(
            TensorTableModel::tensorsFromMime(mime.get(), QStringLiteral("/other.onnx")).isEmpty());
    }

    void dropOnPlacementPanePinsUndoRedo()
    {
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, mixedModel(QStringLiteral("pane"))));
        ui::PlacementState* state = window.placementState();

        const QString unpinnedPreview = window.repackPanel()->previewLabel()->text();
        select(window, {QStringLiteral("small_a"), QStringLiteral("typed_b")});
        QSignalSpy changed(state, &ui::PlacementState::pinsChanged);
        QVERIFY(dropOnPane(window,
            destinationRow(window, PlacementModel::Kind::File, QStringLiteral("weights.bin"))));
        QVERIFY(settled(window));
        QCOMPARE(changed.size(), 1);
        QCOMPARE(state->pinnedCount(), 2);
        QCOMPARE(state->pin(tensorOf(window, QStringLiteral("small_a"))),
            TensorPlacement(Placement::External, "weights.bin"));
        QCOMPARE(planned(window, QStringLiteral("small_a")), QStringLiteral("* weights.bin"));
        QCOMPARE(planned(window, QStringLiteral("typed_b")), QStringLiteral("* weights.bin"));
        QVERIFY(planned(window, QStringLiteral("ext_c")).isEmpty());
        // The preview follows the pins at once.
        QVERIFY2(window.repackPanel()->previewLabel()->text().contains(
                     QStringLiteral("2 tensor(s) move to external")),
            qPrintable(window.repackPanel()->previewLabel()->text()));
        QCOMPARE(window.saveOptions()->placements.size(), size_t(window.snapshot().tensors.size()));

        // Then ext_d inline: a second edit.
        select(window, {QStringLiteral("ext_d")});
        QVERIFY(dropOnPane(window, destinationRow(window, PlacementModel::Kind::Inline)));
        QVERIFY(settled(window));
        QCOMPARE(planned(window, QStringLiteral("ext_d")), QStringLiteral("* inline"));
        QCOMPARE(state->undoStack()->count(), 2);

        state->undoStack()->undo();
        QVERIFY(planned(window, QStringLiteral("ext_d")).isEmpty());
        QCOMPARE(state->pinnedCount(), 2);
        state->undoStack()->undo();
        QCOMPARE(state->pinnedCount(), 0);
        QVERIFY(window.saveOptions()->placements.empty());
        QVERIFY(settled(window));
        QCOMPARE(window.repackPanel()->previewLabel()->text(), unpinnedPreview);
        state->undoStack()->redo();
        state->undoStack()->redo();
        QCOMPARE(state->pinnedCount(), 3);
        QCOMPARE(planned(window, QStringLiteral("ext_d")), QStringLiteral("* inline"));

        // The Edit menu's Undo and Redo are the stack's, with Ctrl+Z / Ctrl+Shift+Z.
        QAction* undo = window.placementView()->undoAction();
        QCOMPARE(undo->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_Z));
        QCOMPARE(window.placementView()->redoAction()->shortcut(),
            QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z));
        undo->trigger();
        QCOMPARE(state->pinnedCount(), 2);

        // Reset all is one edit too.
        window.placementView()->resetAllAction()->trigger();
        QCOMPARE(state->pinnedCount(), 0);
        state->undoStack()->undo();
        QCOMPARE(state->pinnedCount(), 2);

        // "New data file…" asks for a name.
        window.placementView()->setNameAsker([] { return QStringLiteral("sub/extra.data"); });
        select(window, {QStringLiteral("ext_c")});
        QVERIFY(dropOnPane(window, destinationRow(window, PlacementModel::Kind::NewFile)));
        QVERIFY(settled(window));
        QCOMPARE(planned(window, QStringLiteral("ext_c")), QStringLiteral("* sub/extra.data"));
        QVERIFY(destinationRow(window, PlacementModel::Kind::File, QStringLiteral("sub/extra.data"))
            >= 0);

        // Opening another model asks first (issue 27 item 3); discarded, it clears pins and
        // history.
        DialogAnswerer discard(QStringLiteral("Discard"));
        QVERIFY(open(window, mixedModel(QStringLiteral("pane-other"))));
        QCOMPARE(discard.titles, QStringList{QStringLiteral("Save changes?")});
        QCOMPARE(state->pinnedCount(), 0);
        QCOMPARE(state->undoStack()->count(), 0);
        QVERIFY(planned(window, QStringLiteral("ext_c")).isEmpty());
    }

    // Issue 49 item 8: rows dropped on where they are stored already (ext_c, ext_d on their own
    // weights.bin, small_a on inline) are pinned there, but move nothing: no unsaved change,
    // no "[*]" in the title, no close prompt, and Save stays as it was. A pin that moves a
    // tensor marks the window modified until it is undone.
    void aPinToWhereTheTensorIsIsNoChange()
    {
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, mixedModel(QStringLiteral("stay"))));
        ui::PlacementState* state = window.placementState();
        QVERIFY(window.windowTitle().contains(QStringLiteral("[*]")));
        QVERIFY(!window.isWindowModified());
        const bool saveBefore = window.saveAction()->isEnabled();
        const QString previewBefore = window.repackPanel()->previewLabel()->text();

        select(window, {QStringLiteral("ext_c"), QStringLiteral("ext_d")});
        QVERIFY(dropOnPane(window,
            destinationRow(window, PlacementModel::Kind::File, QStringLiteral("weights.bin"))));
        select(window, {QStringLiteral("small_a")});
        QVERIFY(dropOnPane(window, destinationRow(window, PlacementModel::Kind::Inline)));
        QVERIFY(settled(window));
        QCOMPARE(state->pinnedCount(), 3);
        QCOMPARE(state->movingCount(), 0);
        QVERIFY(!window.hasPendingWork());
        QVERIFY(!window.isWindowModified());
        QCOMPARE(window.saveAction()->isEnabled(), saveBefore);
        QCOMPARE(window.repackPanel()->previewLabel()->text(), previewBefore);

        select(window, {QStringLiteral("ext_e")});
        QVERIFY(dropOnPane(window, destinationRow(window, PlacementModel::Kind::Inline)));
        QVERIFY(settled(window));
        QCOMPARE(state->movingCount(), 1);
        QVERIFY(window.isWindowModified());
        state->undoStack()->undo();
        QVERIFY(!window.isWindowModified());

        DialogAnswerer answerer; // none is expected
        QVERIFY(window.close());
        QCOMPARE(answerer.titles, QStringList());
    }

    void dropOnLayoutMapPinsToThatFile()
    {
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, mixedModel(QStringLiteral("map"))));
        ui::LayoutMapView* map = window.layoutMap();
        const QPoint band = map->fileBandPoint(QStringLiteral("weights.bin"));
        QVERIFY(band.x() >= 0);
        QCOMPARE(map->fileAt(band), QStringLiteral("weights.bin"));

        select(window, {QStringLiteral("small_a")});
        auto mime = tableDrag(window);
        QVERIFY(dropAt(map->viewport(), band, mime.get()));
        QVERIFY(settled(window));
        QCOMPARE(window.placementState()->pin(tensorOf(window, QStringLiteral("small_a"))),
            TensorPlacement(Placement::External, "weights.bin"));

        // Nowhere near a band: not accepted, nothing changes.
        QVERIFY(!dropAt(map->viewport(), QPoint(5, map->viewport()->height() - 2), mime.get()));
        QCOMPARE(window.placementState()->pinnedCount(), 1);

        // The map's blocks drag too: click a block (the shared selection), then what a drag
        // from the map carries goes onto the Placement pane's Inline row.
        const int ext = tensorOf(window, QStringLiteral("ext_d"));
        QTest::mouseClick(map->viewport(), Qt::LeftButton, {}, map->blockCenter(ext));
        QVERIFY(map->isHighlighted(ext));
        QCOMPARE(window.tensorView()->selectionModel()->selectedRows().size(), 1);
        // Pressing a selected block and moving starts a drag and keeps the selection (offscreen,
        // QDrag::exec returns at once, so the drop is delivered below).
        QTest::mousePress(map->viewport(), Qt::LeftButton, {}, map->blockCenter(ext));
        QTest::mouseMove(map->viewport(), map->blockCenter(ext) + QPoint(30, 0));
        QTest::mouseRelease(
            map->viewport(), Qt::LeftButton, {}, map->blockCenter(ext) + QPoint(30, 0));
        QVERIFY(map->isHighlighted(ext));
        mime.reset(map->dragMimeData());
        QVERIFY(mime);
        QCOMPARE(
            TensorTableModel::tensorsFromMime(mime.get(), window.currentPath()), QList<int>{ext});
        QListView* list = window.placementView()->list();
        const int inlineRow = destinationRow(window, PlacementModel::Kind::Inline);
        QVERIFY(dropAt(list->viewport(),
            list->visualRect(window.placementView()->model()->index(inlineRow)).center(),
            mime.get()));
        QVERIFY(settled(window));
        QCOMPARE(window.placementState()->pin(ext).kind, Placement::Inline);
        QCOMPARE(window.placementState()->pinnedCount(), 2);
    }

    void refusedDropsChangeNothing_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("reason");
        QTest::addRow("the model itself")
            << QStringLiteral("model.onnx") << QStringLiteral("model file");
        QTest::addRow("another model")
            << QStringLiteral("other.onnx") << QStringLiteral("model file");
        QTest::addRow("outside the folder") << QStringLiteral("../w.bin") << QStringLiteral("..");
        QTest::addRow("absolute") << QStringLiteral("/tmp/w.bin") << QStringLiteral("relative");
        QTest::addRow("a folder") << QStringLiteral("w/") << QStringLiteral("folder");
    }

    void refusedDropsChangeNothing()
    {
        QFETCH(QString, name);
        QFETCH(QString, reason);
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, mixedModel(QStringLiteral("alias"))));
        QSignalSpy refused(window.placementState(), &ui::PlacementState::refused);
        window.placementView()->setNameAsker([name] { return name; });
        select(window, {QStringLiteral("ext_c")});
        QVERIFY(dropOnPane(window, destinationRow(window, PlacementModel::Kind::NewFile)));
        QVERIFY(settled(window));
        QCOMPARE(refused.size(), 1);
        QVERIFY2(window.placementState()->lastRefusal().contains(reason),
            qPrintable(window.placementState()->lastRefusal()));
        QCOMPARE(window.placementState()->pinnedCount(), 0);
        QCOMPARE(window.placementState()->undoStack()->count(), 0);
        QCOMPARE(window.placementView()->model()->rowCount(), 4);
    }

    // Reset Pin and Reset All need a pin to reset: disabled on a model without any.
    void resettingNeedsAPin()
    {
        ui::MainWindow window;
        QVERIFY(open(window, mixedModel(QStringLiteral("reset"))));
        ui::PlacementView* pane = window.placementView();
        QVERIFY(!pane->resetPinsAction()->isEnabled());
        QVERIFY(!pane->resetAllAction()->isEnabled());
        QVERIFY(window.placementState()->pinTo(
            {tensorOf(window, QStringLiteral("small_a"))}, {Placement::External}));
        QVERIFY(settled(window));
        QVERIFY(pane->resetPinsAction()->isEnabled());
        QVERIFY(pane->resetAllAction()->isEnabled());
        pane->resetAllAction()->trigger();
        QVERIFY(!pane->resetPinsAction()->isEnabled());
        QVERIFY(!pane->resetAllAction()->isEnabled());
    }

    void stringTensorCannotGoExternal()
    {
        const QString dir = m_dir.filePath(QStringLiteral("strings"));
        QDir().mkpath(dir);
        QVERIFY(writeStringModel(dir));
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, QDir(dir).filePath(QStringLiteral("strings.onnx"))));
        select(window, {QStringLiteral("labels"), QStringLiteral("w")});
        QVERIFY(dropOnPane(window, destinationRow(window, PlacementModel::Kind::SaveDataFile)));
        QVERIFY(settled(window));
        QVERIFY2(window.placementState()->lastRefusal().contains(QStringLiteral("STRING")),
            qPrintable(window.placementState()->lastRefusal()));
        QVERIFY(window.placementState()->lastRefusal().contains(QStringLiteral("labels")));
        QCOMPARE(window.placementState()->pinnedCount(), 0);
        // The status bar says so at drop time.
        QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("STRING")));
        // Ctrl+E is the same edit from the keyboard, refused the same way; inline is fine.
        window.placementView()->moveExternalAction()->trigger();
        QCOMPARE(window.placementState()->pinnedCount(), 0);
        QVERIFY(dropOnPane(window, destinationRow(window, PlacementModel::Kind::Inline)));
        QVERIFY(settled(window));
        QCOMPARE(window.placementState()->pinnedCount(), 2);
        QVERIFY(window.placementState()->lastRefusal().isEmpty());
    }

    void inlinePastTwoGiBIsRefused()
    {
        const QString dir = m_dir.filePath(QStringLiteral("huge"));
        QDir().mkpath(dir);
        QVERIFY(writeHugeModel(dir));
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, QDir(dir).filePath(QStringLiteral("huge.onnx"))));
        const int inlineRow = destinationRow(window, PlacementModel::Kind::Inline);
        select(window, {QStringLiteral("huge0")});
        QVERIFY(dropOnPane(window, inlineRow));
        QVERIFY(settled(window));
        QCOMPARE(window.placementState()->pinnedCount(), 1);
        select(window, {QStringLiteral("huge1")});
        QVERIFY(dropOnPane(window, inlineRow));
        QVERIFY(settled(window));
        QVERIFY2(window.placementState()->lastRefusal().contains(QStringLiteral("2 GiB")),
            qPrintable(window.placementState()->lastRefusal()));
        QCOMPARE(window.placementState()->pinnedCount(), 1);
        QVERIFY(planned(window, QStringLiteral("huge1")).isEmpty());
        QCOMPARE(window.placementState()->undoStack()->count(), 1);
    }

    void keyboardMoveToMenu()
    {
        ui::MainWindow window;
        QVERIFY(open(window, mixedModel(QStringLiteral("keys"))));
        ui::PlacementView* pane = window.placementView();
        QCOMPARE(pane->moveInlineAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_I));
        QCOMPARE(pane->moveExternalAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_E));
        select(window, {QStringLiteral("ext_c"), QStringLiteral("ext_e")});
        pane->moveInlineAction()->trigger();
        QVERIFY(settled(window));
        QCOMPARE(planned(window, QStringLiteral("ext_c")), QStringLiteral("* inline"));
        QCOMPARE(planned(window, QStringLiteral("ext_e")), QStringLiteral("* inline"));

        // The context menu: Move to > Inline, the save's data file, each file, New data file…
        QMenu menu;
        pane->fillMoveMenu(&menu);
        QMenu* move = menu.actions().constFirst()->menu();
        QVERIFY(move);
        QStringList texts;
        for (QAction* action : move->actions())
            if (!action->isSeparator())
                texts << action->text();
        QCOMPARE(texts.size(), 4);
        QVERIFY(texts.contains(QStringLiteral("weights.bin")));
        QVERIFY(move->actions().contains(pane->moveInlineAction()));
        QVERIFY(menu.actions().contains(pane->resetPinsAction()));
        for (QAction* action : move->actions())
            if (action->text() == QStringLiteral("weights.bin"))
                action->trigger();
        QVERIFY(settled(window));
        QCOMPARE(planned(window, QStringLiteral("ext_c")), QStringLiteral("* weights.bin"));

        select(window, {QStringLiteral("ext_c")});
        pane->resetPinsAction()->trigger();
        QVERIFY(planned(window, QStringLiteral("ext_c")).isEmpty());
        QCOMPARE(planned(window, QStringLiteral("ext_e")), QStringLiteral("* weights.bin"));
    }

    void exportImportRoundTrip()
    {
        ui::MainWindow window;
        const QString path = mixedModel(QStringLiteral("roundtrip"));
        QVERIFY(open(window, path));
        ui::PlacementState* state = window.placementState();
        QVERIFY(state->pinTo(
            {tensorOf(window, QStringLiteral("small_a"))}, {Placement::External, "extra.data"}));
        QVERIFY(settled(window));
        QVERIFY(state->pinTo({tensorOf(window, QStringLiteral("ext_d"))}, {Placement::Inline}));
        QVERIFY(settled(window));
        auto model = repack::Model::load(path.toStdString());
        QVERIFY(model);
        auto before = repack::planSave(**model, path.toStdString(), *window.saveOptions());
        QVERIFY(before);

        const QString planFile = m_dir.filePath(QStringLiteral("roundtrip/plan.json"));
        QSignalSpy exported(&window, &ui::MainWindow::planExported);
        QVERIFY(window.exportPlan(planFile));
        QVERIFY(exported.wait(30000));
        QVERIFY2(exported.constFirst().at(1).toBool(), qPrintable(window.lastError()));
        QFile file(planFile);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(
            json.value(QStringLiteral("schema")).toString(), QStringLiteral("onnx-repack/plan/1"));

        state->resetAll();
        QCOMPARE(state->pinnedCount(), 0);
        QVERIFY2(window.importPlan(planFile), qPrintable(window.lastError()));
        QVERIFY(settled(window));
        QCOMPARE(state->pin(tensorOf(window, QStringLiteral("small_a"))),
            TensorPlacement(Placement::External, "extra.data"));
        QCOMPARE(state->pin(tensorOf(window, QStringLiteral("ext_d"))).kind, Placement::Inline);
        auto after = repack::planSave(**model, path.toStdString(), *window.saveOptions());
        QVERIFY(after);
        QCOMPARE(after->files, before->files);
        QCOMPARE(after->fileBytes, before->fileBytes);
        for (size_t i = 0; i < before->tensors.size(); ++i) {
            QCOMPARE(after->tensors[i].external, before->tensors[i].external);
            QCOMPARE(after->tensors[i].file, before->tensors[i].file);
            QCOMPARE(after->tensors[i].offset, before->tensors[i].offset);
        }
        // The import is one edit.
        const int pinned = state->pinnedCount();
        state->undoStack()->undo();
        QCOMPARE(state->pinnedCount(), 0);
        state->undoStack()->redo();
        QCOMPARE(state->pinnedCount(), pinned);

        // A broken file changes nothing.
        QFile broken(m_dir.filePath(QStringLiteral("roundtrip/broken.json")));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("{\"schema\": \"onnx-repack/plan/1\", \"tensors\": [{\"scope\": \"\", ");
        broken.close();
        QVERIFY(!window.importPlan(broken.fileName()));
        QVERIFY(!window.lastError().isEmpty());
        QCOMPARE(state->pinnedCount(), pinned);
    }

    // planSave grows with the model: the window never runs it on the GUI thread. The preview
    // (on open and after each edit), the check of a dropped pin and of an imported plan, and
    // Export Plan all plan on workers.
    void planningNeverRunsOnTheGuiThread()
    {
        QMutex mutex;
        QList<QThread*> threads;
        ui::setPlanningObserver([&](QThread* thread) {
            QMutexLocker lock(&mutex);
            threads << thread;
        });
        const auto stopObserving = qScopeGuard([] { ui::setPlanningObserver({}); });
        ui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, mixedModel(QStringLiteral("threads"))));
        select(window, {QStringLiteral("small_a")});
        QVERIFY(dropOnPane(window,
            destinationRow(window, PlacementModel::Kind::File, QStringLiteral("weights.bin"))));
        QVERIFY(settled(window));
        QCOMPARE(window.placementState()->pinnedCount(), 1);
        const QString planFile = m_dir.filePath(QStringLiteral("threads/plan.json"));
        QSignalSpy exported(&window, &ui::MainWindow::planExported);
        QVERIFY(window.exportPlan(planFile));
        QVERIFY(exported.wait(30000));
        QVERIFY(window.importPlan(planFile));
        QVERIFY(settled(window));

        QMutexLocker lock(&mutex);
        // Preview on open, check and preview of the drop, export, check of the import.
        QVERIFY2(threads.size() >= 5, qPrintable(QString::number(threads.size())));
        QVERIFY(!threads.contains(qApp->thread()));
    }

    void saveWritesWhatPlanSavePredicted()
    {
        ui::MainWindow window;
        const QString path = mixedModel(QStringLiteral("save"));
        QVERIFY(open(window, path));
        ui::PlacementState* state = window.placementState();
        QVERIFY(state->pinTo({tensorOf(window, QStringLiteral("small_a")),
                                 tensorOf(window, QStringLiteral("ext_e"))},
            {Placement::External, "extra.data"}));
        QVERIFY(settled(window));
        QVERIFY(state->pinTo({tensorOf(window, QStringLiteral("ext_d"))}, {Placement::Inline}));
        QVERIFY(settled(window));
        QVERIFY(state->pinTo({tensorOf(window, QStringLiteral("typed_b"))}, {Placement::External}));
        QVERIFY(settled(window));

        const repack::SaveOptions options = *window.saveOptions();
        std::unique_ptr<repack::Model> source;
        {
            auto loaded = repack::Model::load(path.toStdString());
            QVERIFY(loaded);
            source = std::move(*loaded);
        }
        auto predicted = repack::planSave(*source, path.toStdString(), options);
        QVERIFY(predicted);
        QVERIFY(std::find(predicted->files.begin(), predicted->files.end(), "extra.data")
            != predicted->files.end());

        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(path));
        // No plan edits while the worker saves.
        QVERIFY(!window.placementView()->moveInlineAction()->isEnabled());
        QVERIFY(finished.wait(60000));
        QVERIFY(window.placementView()->moveInlineAction()->isEnabled());
        QVERIFY(finished.constFirst().constFirst().toBool());
        QCOMPARE(state->pinnedCount(), 0); // the save made the plan real

        auto saved = repack::Model::load(path.toStdString());
        QVERIFY(saved);
        const auto& tensors = (*saved)->tensors();
        QCOMPARE(tensors.size(), predicted->tensors.size());
        for (size_t i = 0; i < tensors.size(); ++i) {
            const repack::PlannedTensor& plan = predicted->tensors[i];
            QCOMPARE(tensors[i].isExternal(), plan.external);
            if (!plan.external)
                continue;
            QCOMPARE(tensors[i].external->location(), predicted->files[size_t(plan.file)]);
            QCOMPARE(tensors[i].external->offset, plan.offset);
            QCOMPARE(tensors[i].external->length.value_or(0), plan.length);
        }
        for (size_t f = 0; f < predicted->files.size(); ++f)
            QCOMPARE(uint64_t(QFileInfo(QDir(QFileInfo(path).absolutePath())
                                            .filePath(QString::fromStdString(predicted->files[f])))
                                  .size()),
                predicted->fileBytes[f]);
        // And the table shows it: small_a now lives in extra.data.
        QCOMPARE(window.tensorModel()
                     ->index(tensorOf(window, QStringLiteral("small_a")), TensorTableModel::Storage)
                     .data()
                     .toString(),
            QStringLiteral("extra.data"));
    }
};

QTEST_MAIN(TestPlacement)
#include "tst_placement.moc"
