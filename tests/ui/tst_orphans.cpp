// Issue 36 item 3: pins out of a data file leave bytes no tensor reads. The window calls them
// orphaned (the preview, the Problems pane with the fix), and compacts a file when asked from
// the layout map's or the tensor table's context menu or the repack panel's Compact field: the
// preview shows the orphaned bytes going, and after the save the map shows none. Driven with
// QTest mouse and key events on a shown window; mouse events go through the window system (as
// a user's do), so a right click opens the context menu.
#define QTEST_QPA_MOUSE_HANDLING

#include "dialog_answerer.h"
#include "ui_fixtures.h"
#include "window_steps.h"

#include "core/model/model.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/model_builder.h"
#include "tests/support/python_reader.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"
#include "ui/models/layout_diff.h"
#include "ui/models/placement_state.h"
#include "ui/models/problems_model.h"
#include "ui/models/tensor_filter_proxy.h"
#include "ui/models/tensor_table_model.h"
#include "ui/save/save_preview.h"
#include "ui/util/byte_format.h"
#include "ui/util/settings_store.h"
#include "ui/views/layout_diff_view.h"
#include "ui/views/layout_map_view.h"
#include "ui/views/repack_panel.h"
#include "ui/windows/main_window.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolButton>
#include <QUndoStack>
#include <QtTest>

namespace {

using windowsteps::open;
using windowsteps::saveWithKeys;
using windowsteps::settled;
using windowsteps::tensorOf;

constexpr auto kWeights = "weights.bin";
// What pinning ext_d out of weights.bin leaves orphaned: its own 16 KiB. The 3072 bytes before
// it, from the end of the tensor before it to 4096, stay padding: what a 4096 alignment asks
// for before the tensor that now follows that one.
constexpr uint64_t kHole = 20480 - 4096;

// Clicks the row of tensor `name` in the table, as a user selects it.
void clickRow(ui::MainWindow& window, const QString& name)
{
    QTableView* table = window.tensorView();
    const QModelIndex index = window.tensorProxy()->mapFromSource(
        window.tensorModel()->index(tensorOf(window, name), 0));
    table->scrollTo(index);
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(index).center());
}

// Clicks `widget` at `pos` with `button` and, in the menu that opens, clicks the action named
// `objectName`: its text ("" when the menu had none; the menu is closed then). A disabled
// action is not clicked: its text ends with " (disabled)".
QString chooseInMenu(QWidget* widget, QPoint pos, const QString& objectName, Qt::MouseButton button)
{
    QString chosen;
    QTimer poll;
    poll.setInterval(20);
    QObject::connect(&poll, &QTimer::timeout, [&] {
        auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget());
        if (!menu)
            return;
        poll.stop();
        for (QAction* action : menu->actions()) {
            if (action->objectName() != objectName)
                continue;
            chosen = action->text();
            if (action->isEnabled()) {
                QTest::mouseClick(menu, Qt::LeftButton, {}, menu->actionGeometry(action).center());
                return;
            }
            chosen += QStringLiteral(" (disabled)");
        }
        menu->close();
    });
    poll.start();
    QTest::mouseClick(widget, button, {}, pos);
    if (!QTest::qWaitFor([&poll] { return !poll.isActive(); }, 5000))
        return QStringLiteral("(no menu)");
    return chosen;
}

// The context menu of `widget` at `pos`, by a right click: chooseInMenu.
QString chooseInContextMenu(QWidget* widget, QPoint pos, const QString& objectName)
{
    return chooseInMenu(widget, pos, objectName, Qt::RightButton);
}

// The problems of the window with code `code`: their messages.
QStringList problems(const ui::MainWindow& window, const QString& code)
{
    QStringList out;
    const ui::ProblemsModel* model = window.problemsModel();
    for (int r = 0; r < model->rowCount(); ++r)
        if (model->index(r, ui::ProblemsModel::Code).data().toString() == code)
            out << model->index(r, ui::ProblemsModel::Message).data().toString();
    return out;
}

uint64_t orphanedIn(const ui::MainWindow& window, const QString& location)
{
    for (const repack::FileLayout& file : window.snapshot().layouts)
        if (QString::fromStdString(file.location) == location)
            return file.orphanedBytes;
    return UINT64_MAX;
}

// Every tensor's values in the model at `path` as the core reads them, by name (as python3-onnx
// names them); empty when it cannot be read.
fixtures::ValueHashes valuesOf(const QString& path)
{
    auto model = repack::Model::load(path.toStdString());
    if (!model)
        return {};
    const auto bytes = fixtures::readAllTensors(**model);
    std::map<std::string, std::string> byName;
    for (const repack::TensorInfo& t : (*model)->tensors())
        byName[t.name] = bytes.at(t.qualifiedName());
    return fixtures::hashesOf(byName);
}

QString preview(const ui::MainWindow& window)
{
    return window.repackPanel()->previewLabel()->text();
}

// The "after" side of data file `location` in the Before / after view, once it shows the
// latest plan; null when it has no such file.
const ui::LaneSide* afterSideOf(const ui::MainWindow& window, const QString& location)
{
    if (!QTest::qWaitFor([&window] { return !window.beforeAfter()->isPending(); }, 10000))
        return nullptr;
    const ui::LayoutDiff* diff = window.beforeAfter()->view()->diff();
    if (!diff)
        return nullptr;
    for (const ui::DiffLane& lane : diff->lanes)
        if (lane.location == location)
            return &lane.after;
    return nullptr;
}

// model.onnx (writeMixedModel: ext_c at 0, ext_d at 4096, ext_e at 20480 of weights.bin) open
// in `window`, shown, with ext_d pinned inline by a click on its row and Ctrl+I.
bool openAndPinExtD(ui::MainWindow& window, const QString& path)
{
    window.show();
    if (!QTest::qWaitForWindowExposed(&window) || !open(window, path))
        return false;
    if (auto* dock = window.findChild<QDockWidget*>(QStringLiteral("beforeAfterDock"))) {
        dock->show(); // the Before / after view builds its diff while shown
        dock->raise();
    }
    clickRow(window, QStringLiteral("ext_d"));
    QTest::keyClick(window.tensorView(), Qt::Key_I, Qt::ControlModifier);
    return settled(window);
}

// openAndPinExtD of writeMixedModel in `dir`, saved with Ctrl+S: weights.bin then holds kHole
// orphaned bytes.
bool openWithAHole(ui::MainWindow& window, const QString& dir)
{
    return !uifixtures::writeMixedModel(dir).empty()
        && openAndPinExtD(window, QDir(dir).filePath(QStringLiteral("model.onnx")))
        && saveWithKeys(window);
}

} // namespace

class TestOrphans : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("onnx-repack-tests"));
        QApplication::setApplicationName(QStringLiteral("tst_orphans"));
    }

    void init() { ui::writeSettings({{QStringLiteral("modelOptions"), QVariantMap()}}); }

    // The path: pin out, save; the preview said "orphaned" (not padding), the Problems
    // pane lists the orphaned bytes with the fix; Compact from the map's context menu, the
    // preview shows them going, Ctrl+S, and the map shows none; python3-onnx loads the result.
    void pinnedOutBytesAreNamedAndCompactedFromTheMap()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        const fixtures::ValueHashes values = valuesOf(path);
        QVERIFY(!values.isEmpty());
        ui::MainWindow window;
        QVERIFY(openAndPinExtD(window, path));
        QCOMPARE(window.placementState()->pinnedCount(), 1);
        const QString hole = ui::formatBytes(kHole); // 16.0 KiB
        QTRY_VERIFY2(
            preview(window).contains(QStringLiteral("weights.bin keeps %1 orphaned").arg(hole)),
            qPrintable(preview(window)));
        // The Before / after view draws the hole as orphaned, and as padding only the 3072
        // bytes a 4096 alignment asks for after the tensor before it.
        const ui::LaneSide* after = afterSideOf(window, QString::fromLatin1(kWeights));
        QVERIFY(after);
        QCOMPARE(after->orphaned, kHole);
        QCOMPARE(after->padding, uint64_t(3072));
        QVERIFY(std::any_of(after->gaps.begin(), after->gaps.end(),
            [](const ui::DiffGap& gap) { return gap.orphaned && gap.length == kHole; }));
        QVERIFY(saveWithKeys(window));
        QCOMPARE(orphanedIn(window, kWeights), kHole);

        const QStringList said = problems(window, QStringLiteral("orphaned-bytes"));
        QCOMPARE(said.size(), 1);
        QVERIFY2(
            said[0].contains(QStringLiteral("data file weights.bin holds 16.0 KiB (16384 bytes)"))
                && said[0].contains(QStringLiteral("fix: compact it")),
            qPrintable(said[0]));

        // The map's context menu on the band of weights.bin.
        ui::LayoutMapView* map = window.layoutMap();
        const QPoint band = map->fileBandPoint(QString::fromLatin1(kWeights));
        QVERIFY(band.x() >= 0);
        QCOMPARE(chooseInContextMenu(map->viewport(), band, QStringLiteral("compactFileAction")),
            QStringLiteral("Compact weights.bin (%1 orphaned)").arg(hole));
        QCOMPARE(window.repackPanel()->compactFiles(), QStringList{QString::fromLatin1(kWeights)});
        QVERIFY(window.hasPendingWork());
        QVERIFY(settled(window));
        QTRY_VERIFY2(
            preview(window).contains(
                QStringLiteral("weights.bin: its %1 orphaned go").arg(ui::formatBytes(kHole))),
            qPrintable(preview(window)));
        QTRY_VERIFY(window.saveAction()->isEnabled());
        after = afterSideOf(window, QString::fromLatin1(kWeights));
        QVERIFY(after);
        QCOMPARE(after->orphaned, uint64_t(0));

        QVERIFY(saveWithKeys(window));
        QCOMPARE(orphanedIn(window, kWeights), uint64_t(0));
        QVERIFY(problems(window, QStringLiteral("orphaned-bytes")).isEmpty());
        QCOMPARE(window.repackPanel()->compactFiles(), QStringList()); // done
        QVERIFY(!window.hasPendingWork());
        // Compact is never greyed out by how the gaps are counted: compacting a compact file
        // again plans nothing, and says so.
        QCOMPARE(
            chooseInContextMenu(map->viewport(), map->fileBandPoint(QString::fromLatin1(kWeights)),
                QStringLiteral("compactFileAction")),
            QStringLiteral("Compact weights.bin (no orphaned bytes)"));
        QCOMPARE(window.repackPanel()->compactFiles(), QStringList{QString::fromLatin1(kWeights)});
        QVERIFY(settled(window));
        QTRY_VERIFY2(window.saveAction()->toolTip().startsWith(QStringLiteral("Nothing to change")),
            qPrintable(window.saveAction()->toolTip()));
        QVERIFY(!window.saveAction()->isEnabled());

        QVERIFY_PYTHON_LOADS(REPACK_VALUES_SCRIPT, path, values, "compacted");
    }

    // A gap before a tensor at 64 KiB: what a 64 KiB alignment asks for, but beyond the 3096
    // bytes a 4096 one asks for, orphaned. The map and summary count it against the alignment
    // the Repack pane would save with, and count again when it changes.
    void theMapCountsGapsAgainstTheAlignmentOfTheNextSave()
    {
        QTemporaryDir dir;
        const QString path
            = fixtures::writeTensorsAtZeroAnd64KiB(dir.path(), QStringLiteral("m.onnx"), 1000);
        QVERIFY(!path.isEmpty());

        ui::MainWindow window;
        QVERIFY(open(window, path));
        QComboBox* alignment = window.repackPanel()->alignmentBox();
        const auto choose = [&](uint64_t bytes) {
            for (int i = 0; i < alignment->count(); ++i) {
                alignment->setCurrentIndex(i);
                if (window.repackPanel()->options()->alignment == bytes)
                    return true;
            }
            return false;
        };
        // The Problems pane says what the map says, of the same bytes.
        const auto warned = [&](uint64_t bytes) {
            const QStringList said = problems(window, QStringLiteral("orphaned-bytes"));
            return said.size() == 1
                && said.constFirst().contains(QStringLiteral("(%1 bytes)").arg(bytes));
        };
        QVERIFY(choose(4096));
        QTRY_COMPARE(orphanedIn(window, QStringLiteral("w.bin")), uint64_t(65536 - 4096));
        QCOMPARE(window.snapshot().orphanedBytes, uint64_t(65536 - 4096));
        QVERIFY2(warned(65536 - 4096),
            qPrintable(problems(window, QStringLiteral("orphaned-bytes")).join(u'\n')));
        QVERIFY(choose(65536));
        QTRY_COMPARE(orphanedIn(window, QStringLiteral("w.bin")), uint64_t(0));
        QCOMPARE(window.snapshot().layouts.front().paddingBytes, uint64_t(65536 - 1000));
        QCOMPARE(window.layoutMap()->files().front().alignment, uint64_t(65536));
        QVERIFY(problems(window, QStringLiteral("orphaned-bytes")).isEmpty());
        QVERIFY(choose(0)); // dense: nothing asks for a gap
        QTRY_COMPARE(orphanedIn(window, QStringLiteral("w.bin")), uint64_t(65536 - 1000));
        QVERIFY2(warned(65536 - 1000),
            qPrintable(problems(window, QStringLiteral("orphaned-bytes")).join(u'\n')));
        auto* dock = window.findChild<QDockWidget*>(QStringLiteral("problemsDock"));
        QVERIFY(dock);
        QVERIFY2(dock->windowTitle().contains(QStringLiteral("1 warnings")),
            qPrintable(dock->windowTitle()));
    }

    // The tensor table's context menu offers Compact for the files of the selected tensors;
    // one undo takes it back.
    void compactFromTheTableMenuIsOneUndoableEdit()
    {
        QTemporaryDir dir;
        ui::MainWindow window;
        QVERIFY(openWithAHole(window, dir.path()));

        clickRow(window, QStringLiteral("ext_e"));
        QTableView* table = window.tensorView();
        const QModelIndex row = window.tensorProxy()->mapFromSource(
            window.tensorModel()->index(tensorOf(window, QStringLiteral("ext_e")), 0));
        QCOMPARE(chooseInContextMenu(table->viewport(), table->visualRect(row).center(),
                     QStringLiteral("compactFileAction")),
            QStringLiteral("Compact weights.bin (%1 orphaned)").arg(ui::formatBytes(kHole)));
        QCOMPARE(window.repackPanel()->compactFiles(), QStringList{QString::fromLatin1(kWeights)});
        QVERIFY(settled(window));
        QTRY_VERIFY(preview(window).contains(QStringLiteral("orphaned go")));

        QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(window.repackPanel()->compactFiles(), QStringList());
        QVERIFY(!window.hasPendingWork());
    }

    // The repack panel's Compact button: only while tensors keep their place (laid out anew,
    // every file is compact); its menu offers the files with orphaned bytes, and the one
    // checked is compacted by the save.
    void compactChosenInThePanel()
    {
        QTemporaryDir dir;
        ui::MainWindow window;
        QVERIFY(openWithAHole(window, dir.path()));
        QVERIFY(orphanedIn(window, kWeights) > 0);

        ui::RepackPanel* panel = window.repackPanel();
        QToolButton* compact = panel->compactButton();
        QVERIFY(compact->isEnabled());
        QTest::mouseClick(
            panel->keepBox(), Qt::LeftButton, {}, QPoint(5, panel->keepBox()->height() / 2));
        QVERIFY(!panel->keepsPlacement());
        QVERIFY(!compact->isEnabled());
        QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier);
        QVERIFY(panel->keepsPlacement());
        QVERIFY(compact->isEnabled());

        QCOMPARE(chooseInMenu(compact, compact->rect().center(), QStringLiteral("compactChoice"),
                     Qt::LeftButton),
            QStringLiteral("weights.bin (%1 orphaned)").arg(ui::formatBytes(kHole)));
        QCOMPARE(panel->request().compact, std::vector<std::string>{"weights.bin"});
        QCOMPARE(compact->text(), QStringLiteral("Compact (1)"));
        QVERIFY(settled(window));
        QTRY_VERIFY2(
            preview(window).contains(
                QStringLiteral("weights.bin: its %1 orphaned go").arg(ui::formatBytes(kHole))),
            qPrintable(preview(window)));
        QVERIFY(saveWithKeys(window));
        QCOMPARE(orphanedIn(window, kWeights), uint64_t(0));
    }
};

QTEST_MAIN(TestOrphans)
#include "tst_orphans.moc"
