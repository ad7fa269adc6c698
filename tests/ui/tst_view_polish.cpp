// Issue 36 item 6: a cell cut short shows its whole text in a tooltip (the tensor table, the
// Problems pane); the Planned column says where the threshold rule puts every tensor once "Keep
// tensors where they are" is unchecked, from the plan the preview made; the Placement pane
// lists nothing while no model is open. Driven with QTest mouse and key events on a shown
// window.
#include "ui_fixtures.h"
#include "window_steps.h"

#include "ui/models/placement_model.h"
#include "ui/models/placement_state.h"
#include "ui/models/problems_model.h"
#include "ui/models/tensor_filter_proxy.h"
#include "ui/models/tensor_table_model.h"
#include "ui/util/settings_store.h"
#include "ui/views/elided_tool_tips.h"
#include "ui/views/placement_view.h"
#include "ui/views/repack_panel.h"
#include "ui/windows/main_window.h"

#include <QCheckBox>
#include <QHeaderView>
#include <QLabel>
#include <QListView>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolTip>
#include <QUndoStack>
#include <QtTest>

using ui::TensorTableModel;

namespace {

using windowsteps::open;
using windowsteps::settled;
using windowsteps::showActive;
using windowsteps::tensorOf;

QModelIndex tableCell(ui::MainWindow& window, const QString& name, int column)
{
    return window.tensorProxy()->mapFromSource(
        window.tensorModel()->index(tensorOf(window, name), column));
}

QString planned(ui::MainWindow& window, const QString& name)
{
    return tableCell(window, name, TensorTableModel::Planned).data().toString();
}

// Rests the mouse on `cell` of `view` until its tooltip shows; the tooltip's text, or empty
// when none showed.
QString hover(QAbstractItemView* view, const QModelIndex& cell)
{
    QToolTip::hideText(); // it fades out: wait until the last one is gone
    if (!QTest::qWaitFor([] { return !QToolTip::isVisible(); }, 5000))
        return {};
    view->scrollTo(cell);
    const QPoint at = view->visualRect(cell).center();
    QTest::mouseMove(view->viewport(), at - QPoint(4, 0));
    QTest::mouseMove(view->viewport(), at);
    if (!QTest::qWaitFor([] { return QToolTip::isVisible(); }, 5000))
        return {};
    return QToolTip::text();
}

void clickKeepBox(ui::MainWindow& window)
{
    QCheckBox* keep = window.repackPanel()->keepBox();
    QTest::mouseClick(keep, Qt::LeftButton, {}, QPoint(8, keep->height() / 2));
}

} // namespace

class TestViewPolish : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("onnx-repack-tests"));
        QApplication::setApplicationName(QStringLiteral("tst_view_polish"));
    }

    void init() { ui::writeSettings({{QStringLiteral("modelOptions"), QVariantMap()}}); }

    // The tensor table's Kind column narrowed until "initializer" is cut: hovering the cell
    // shows it whole; a cell that fits has nothing to add.
    void aCellCutShortShowsItsTextInATooltip()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        ui::MainWindow window;
        QVERIFY(showActive(window));
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        QTableView* table = window.tensorView();
        table->horizontalHeader()->resizeSection(TensorTableModel::Kind, 40);
        const QModelIndex kind = tableCell(window, QStringLiteral("ext_c"), TensorTableModel::Kind);
        QCOMPARE(kind.data().toString(), QStringLiteral("initializer"));
        QCOMPARE(hover(table, kind), QStringLiteral("initializer"));

        table->horizontalHeader()->resizeSection(TensorTableModel::Kind, 300);
        QCOMPARE(ui::cutText(table, kind), QString());
        table->horizontalHeader()->resizeSection(TensorTableModel::Kind, 40);
        QCOMPARE(ui::cutText(table, kind), QStringLiteral("initializer"));
        // A cell with a tooltip of its own keeps it (it says more than the text).
        const QModelIndex storage
            = tableCell(window, QStringLiteral("ext_c"), TensorTableModel::Storage);
        table->horizontalHeader()->resizeSection(TensorTableModel::Storage, 30);
        QVERIFY2(hover(table, storage).startsWith(QStringLiteral("In data file weights.bin")),
            qPrintable(QToolTip::text()));
    }

    // The Problems pane: a problem's code cut short ("missing-f…") shows whole.
    void aProblemCodeCutShortShowsInATooltip()
    {
        QTemporaryDir dir;
        QVERIFY(uifixtures::writeBrokenModel(dir.path(), "gone.bin"));
        ui::MainWindow window;
        QVERIFY(showActive(window));
        QVERIFY(open(window, dir.filePath(QStringLiteral("broken.onnx"))));
        auto* problems = window.findChild<QTableView*>(QStringLiteral("problemsView"));
        QVERIFY(problems);
        int row = -1;
        for (int r = 0; r < problems->model()->rowCount(); ++r)
            if (problems->model()->index(r, ui::ProblemsModel::Code).data().toString()
                == QStringLiteral("missing-file"))
                row = r;
        QVERIFY(row >= 0);
        problems->horizontalHeader()->resizeSection(ui::ProblemsModel::Code, 40);
        QCOMPARE(hover(problems, problems->model()->index(row, ui::ProblemsModel::Code)),
            QStringLiteral("missing-file"));
    }

    // Unchecking "Keep tensors where they are" with the mouse: the Planned column says where
    // the threshold rule puts each tensor (the preview's plan); a pin still shows as one;
    // checking it again leaves only the pins.
    void plannedShowsWhereTheRulePutsEachTensor()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeInlineModel(dir.path(), {100, 5000}).empty());
        ui::MainWindow window;
        QVERIFY(showActive(window));
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        QCOMPARE(planned(window, QStringLiteral("w1")), QString());

        clickKeepBox(window);
        QVERIFY(!window.repackPanel()->keepsPlacement());
        // The preview is made a moment after the edit, on a worker.
        QTRY_COMPARE_WITH_TIMEOUT(
            planned(window, QStringLiteral("w1")), QStringLiteral("model.onnx.data"), 60000);
        QCOMPARE(planned(window, QStringLiteral("w0")), QStringLiteral("inline"));
        const QModelIndex w1 = tableCell(window, QStringLiteral("w1"), TensorTableModel::Planned);
        QVERIFY2(w1.data(Qt::ToolTipRole).toString().contains(QStringLiteral("threshold")),
            qPrintable(w1.data(Qt::ToolTipRole).toString()));

        // A pin (Ctrl+I on the selected row) shows as a pin.
        QTableView* table = window.tensorView();
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(w1).center());
        QTest::keyClick(table, Qt::Key_I, Qt::ControlModifier);
        QVERIFY(settled(window));
        QCOMPARE(planned(window, QStringLiteral("w1")), QStringLiteral("* inline"));

        clickKeepBox(window);
        QVERIFY(window.repackPanel()->keepsPlacement());
        QTRY_COMPARE_WITH_TIMEOUT(planned(window, QStringLiteral("w0")), QString(), 60000);
        QCOMPARE(planned(window, QStringLiteral("w1")), QStringLiteral("* inline"));
    }

    // Issue 49 item 8: the Planned column narrowed until "* save's data file" is cut: hovering
    // the cell shows its whole text, then why it is planned so.
    void aCutPlannedCellShowsItsWholeText()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeInlineModel(dir.path(), {100, 5000}).empty());
        ui::MainWindow window;
        QVERIFY(showActive(window));
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        QTableView* table = window.tensorView();
        const QModelIndex w1 = tableCell(window, QStringLiteral("w1"), TensorTableModel::Planned);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(w1).center());
        QTest::keyClick(table, Qt::Key_E, Qt::ControlModifier);
        QVERIFY(settled(window));
        QCOMPARE(planned(window, QStringLiteral("w1")), QStringLiteral("* save's data file"));
        table->horizontalHeader()->resizeSection(TensorTableModel::Planned, 50);
        QVERIFY(!ui::cutText(table, w1).isEmpty());
        const QString tip = hover(table, w1);
        QVERIFY2(tip.startsWith(QStringLiteral("* save's data file\n")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("Pinned")), qPrintable(tip));
    }

    // Issue 49 item 8: while nothing is pinned, the Placement pane says under its destinations
    // that table rows and map blocks are dropped on them; a pin hides the hint, its undo shows
    // it again.
    void theEmptyPlacementPaneSaysWhatToDropOnIt()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        ui::MainWindow window;
        QVERIFY(showActive(window));
        ui::PlacementView* pane = window.placementView();
        QVERIFY(pane->isVisible());
        const QString hint = pane->hint();
        QVERIFY2(hint.contains(QStringLiteral("rows from the table"))
                && hint.contains(QStringLiteral("blocks from the layout map")),
            qPrintable(hint));
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        QCOMPARE(pane->hint(), hint);
        QTableView* table = window.tensorView();
        const QModelIndex ext = tableCell(window, QStringLiteral("ext_c"), TensorTableModel::Name);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(ext).center());
        QTest::keyClick(table, Qt::Key_I, Qt::ControlModifier);
        QVERIFY(settled(window));
        QCOMPARE(window.placementState()->pinnedCount(), 1);
        QVERIFY(pane->hint().isEmpty());
        window.placementState()->undoStack()->undo();
        QCOMPARE(pane->hint(), hint);
    }

    // No model: the Placement pane lists nothing (not an empty "(save's data file)").
    void thePlacementPaneIsEmptyWithoutAModel()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        ui::MainWindow window;
        QVERIFY(showActive(window));
        QListView* list = window.placementView()->list();
        QCOMPARE(list->model()->rowCount(), 0);
        QVERIFY(!list->isEnabled());
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        QCOMPARE(list->model()->rowCount(), 4);
        QVERIFY(list->isEnabled());
        QCOMPARE(list->model()->index(1, 0).data(ui::PlacementModel::LocationRole).toString(),
            QStringLiteral("model.onnx.data"));
    }
};

QTEST_MAIN(TestViewPolish)
#include "tst_view_polish.moc"
