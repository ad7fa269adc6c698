// Issue 27 items 1-4: the desktop app keeps what the user made. The layout on disk is the
// baseline (a saved hand-made layout is not proposed back, Save is disabled after saving), one
// undo stack holds option edits and pins and shows what it undid, pending work is never thrown
// away without asking, and what was typed for one model is not pre-filled for the next. Driven
// with QTest key and mouse events on a shown window.
#include "dialog_answerer.h"
#include "ui_fixtures.h"
#include "window_steps.h"

#include "core/model/model.h"
#include "ui/models/placement_state.h"
#include "ui/models/tensor_filter_proxy.h"
#include "ui/models/tensor_table_model.h"
#include "ui/util/settings_store.h"
#include "ui/util/shipped_files.h"
#include "ui/views/repack_panel.h"
#include "ui/views/size_edit.h"
#include "ui/windows/folder_window.h"
#include "ui/windows/main_window.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QUrl>
#include <QtTest>

using repack::Placement;
using repack::TensorPlacement;

namespace {

using uifixtures::placesOn;
using windowsteps::open;
using windowsteps::saveWithKeys;
using windowsteps::settled;
using windowsteps::tensorOf;

// Replaces a size field's number by `text` as a user types it, ending with Enter.
void typeSize(ui::SizeEdit* edit, const QString& text)
{
    QDoubleSpinBox* spin = edit->spinBox();
    spin->setFocus();
    QTest::keyClick(spin, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(spin, text);
    QTest::keyClick(spin, Qt::Key_Return);
}

// model.onnx (writeMixedModel: three tensors in weights.bin) and b.onnx (two inline tensors of
// 100 and 5000 bytes) in `dir`; empty paths when they could not be written.
std::pair<QString, QString> twoModels(const QString& dir)
{
    if (uifixtures::writeMixedModel(dir).empty()
        || uifixtures::writeInlineModel(dir, {100, 5000}, QStringLiteral("b.onnx")).empty())
        return {};
    return {QDir(dir).filePath(QStringLiteral("model.onnx")),
        QDir(dir).filePath(QStringLiteral("b.onnx"))};
}

bool pinAndSettle(
    ui::MainWindow& window, const QList<int>& tensors, const TensorPlacement& destination)
{
    return window.placementState()->pinTo(tensors, destination) && settled(window);
}

} // namespace

class TestUserWork : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("onnx-repack-tests"));
        QApplication::setApplicationName(QStringLiteral("tst_user_work"));
    }

    void init() { ui::writeSettings({{QStringLiteral("modelOptions"), QVariantMap()}}); }

    // Item 1: pins saved are the new baseline; Save is disabled right after, a second Ctrl+S
    // writes nothing, and pinning one more tensor later leaves the earlier ones in place.
    void aSavedLayoutIsTheBaseline()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, path));
        // Opened: nothing moves unless asked.
        QVERIFY(window.repackPanel()->keepsPlacement());
        QTRY_VERIFY(!window.saveAction()->isEnabled());
        QVERIFY2(window.saveAction()->toolTip().startsWith(QStringLiteral("Nothing to change")),
            qPrintable(window.saveAction()->toolTip()));

        QVERIFY(pinAndSettle(window, {tensorOf(window, QStringLiteral("small_a"))},
            {Placement::External, "extra.bin"}));
        QVERIFY(
            pinAndSettle(window, {tensorOf(window, QStringLiteral("ext_c"))}, {Placement::Inline}));
        QTRY_VERIFY(window.saveAction()->isEnabled());
        QVERIFY(saveWithKeys(window));

        auto places = placesOn(path);
        QCOMPARE(places.value(QStringLiteral("small_a")), QStringLiteral("extra.bin@0"));
        QCOMPARE(places.value(QStringLiteral("ext_c")), QStringLiteral("inline"));
        // The others stayed where they were in weights.bin (ext_d aligned at 4096).
        QCOMPARE(places.value(QStringLiteral("ext_d")), QStringLiteral("weights.bin@4096"));
        QCOMPARE(window.placementState()->pinnedCount(), 0);
        QVERIFY(window.repackPanel()->keepsPlacement());
        QVERIFY(!window.hasPendingWork());
        QTRY_VERIFY(!window.saveAction()->isEnabled());
        QVERIFY2(window.saveAction()->toolTip().startsWith(QStringLiteral("Nothing to change")),
            qPrintable(window.saveAction()->toolTip()));
        // A second Ctrl+S does nothing.
        const auto files = uifixtures::folderContents(dir.path());
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier);
        QVERIFY(!finished.wait(300));
        QCOMPARE(uifixtures::folderContents(dir.path()), files);

        // Reopened, one more tensor to extra.bin joins small_a there instead of replacing it.
        ui::MainWindow again;
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QVERIFY(open(again, path));
        QTRY_VERIFY(!again.saveAction()->isEnabled());
        QVERIFY(pinAndSettle(
            again, {tensorOf(again, QStringLiteral("ext_e"))}, {Placement::External, "extra.bin"}));
        QVERIFY(saveWithKeys(again));
        places = placesOn(path);
        QCOMPARE(places.value(QStringLiteral("small_a")), QStringLiteral("extra.bin@0"));
        QVERIFY2(places.value(QStringLiteral("ext_e")).startsWith(QStringLiteral("extra.bin@")),
            qPrintable(places.value(QStringLiteral("ext_e"))));
        QCOMPARE(places.value(QStringLiteral("ext_c")), QStringLiteral("inline"));
        QCOMPARE(places.value(QStringLiteral("ext_d")), QStringLiteral("weights.bin@4096"));
    }

    // Item 1: changing an option is asking for the rule; unchecking "keep" is the explicit way.
    void anOptionChangedAppliesTheRule()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeInlineModel(dir.path(), {100, 5000, 9000}).empty());
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, path));
        QTRY_VERIFY(!window.saveAction()->isEnabled()); // kept: all stay inline
        ui::RepackPanel* panel = window.repackPanel();
        typeSize(panel->thresholdEdit(), QStringLiteral("8"));
        QCOMPARE(panel->thresholdEdit()->value(), uint64_t(8192));
        QVERIFY(!panel->keepsPlacement());
        QTRY_VERIFY(window.saveAction()->isEnabled());
        QVERIFY(saveWithKeys(window));
        const auto places = placesOn(path);
        QCOMPARE(places.value(QStringLiteral("w0")), QStringLiteral("inline"));
        QCOMPARE(places.value(QStringLiteral("w1")), QStringLiteral("inline"));
        QCOMPARE(places.value(QStringLiteral("w2")), QStringLiteral("model.onnx.data@0"));
        // Saved: kept again, and the fields still say how it was made.
        QVERIFY(panel->keepsPlacement());
        QCOMPARE(panel->thresholdEdit()->value(), uint64_t(8192));
        QTRY_VERIFY(!window.saveAction()->isEnabled());

        // Unchecking "keep" with the mouse applies the rule with these fields: nothing to
        // change, as the model was saved with them.
        QTest::mouseClick(panel->keepBox(), Qt::LeftButton, {},
            panel->keepBox()->rect().topLeft() + QPoint(8, panel->keepBox()->height() / 2));
        QVERIFY(!panel->keepsPlacement());
        QVERIFY(window.hasPendingWork());
        QVERIFY(settled(window));
        QTRY_VERIFY(!window.saveAction()->isEnabled());
    }

    // Item 2: Ctrl+Z undoes the threshold first (not a pin out of sight), then the pin, which it
    // selects and scrolls to; Ctrl+Shift+Z redoes; typing a data file name is one edit, undone
    // by Ctrl+Z in the field itself.
    void oneUndoStackForOptionsAndPins()
    {
        QTemporaryDir dir;
        const std::vector<uint64_t> sizes(300, 100);
        QVERIFY(!uifixtures::writeInlineModel(dir.path(), sizes).empty());
        ui::MainWindow window;
        window.resize(1024, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        const QList<int> last = {tensorOf(window, QStringLiteral("w297")),
            tensorOf(window, QStringLiteral("w298")), tensorOf(window, QStringLiteral("w299"))};
        QVERIFY(pinAndSettle(window, last, {Placement::External, "x.bin"}));
        QTableView* table = window.tensorView();
        table->clearSelection();
        table->scrollToTop();

        ui::RepackPanel* panel = window.repackPanel();
        QUndoStack* undo = window.placementState()->undoStack();
        typeSize(panel->thresholdEdit(), QStringLiteral("2"));
        QCOMPARE(panel->thresholdEdit()->value(), uint64_t(2048));
        QVERIFY(!panel->keepsPlacement());
        QCOMPARE(undo->count(), 2);

        table->setFocus();
        QTest::keyClick(table, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(panel->thresholdEdit()->value(), uint64_t(1024));
        QVERIFY(panel->keepsPlacement());
        QCOMPARE(window.placementState()->pinnedCount(), 3);

        QTest::keyClick(table, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(window.placementState()->pinnedCount(), 0);
        // What was undone is selected and in view.
        QModelIndexList selected = table->selectionModel()->selectedRows();
        QList<int> rows;
        for (const QModelIndex& index : selected)
            rows << window.tensorProxy()->mapToSource(index).row();
        std::sort(rows.begin(), rows.end());
        QCOMPARE(rows, last);
        const QModelIndex first = window.tensorProxy()->mapFromSource(
            window.tensorModel()->index(last.constFirst(), 0));
        QVERIFY(table->viewport()->rect().intersects(table->visualRect(first)));

        QTest::keyClick(table, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(window.placementState()->pinnedCount(), 3);
        QTest::keyClick(table, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(panel->thresholdEdit()->value(), uint64_t(2048));
        QVERIFY(!panel->keepsPlacement());

        // Ctrl+Z in the threshold's own field undoes on the shared stack too (keep comes back,
        // which the field's text undo would not do), and Ctrl+Shift+Z there redoes.
        panel->thresholdEdit()->spinBox()->setFocus();
        QTest::keyClick(panel->thresholdEdit()->spinBox(), Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(panel->thresholdEdit()->value(), uint64_t(1024));
        QVERIFY(panel->keepsPlacement());
        QTest::keyClick(
            panel->thresholdEdit()->spinBox(), Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(panel->thresholdEdit()->value(), uint64_t(2048));
        QVERIFY(!panel->keepsPlacement());

        // Typing a name is one edit; Ctrl+Z in the field undoes it on the shared stack.
        const int before = undo->index();
        QLineEdit* data = panel->dataFileEdit();
        QTest::mouseClick(data, Qt::LeftButton);
        QTest::keyClicks(data, QStringLiteral("weights.bin"));
        QCOMPARE(undo->index(), before + 1);
        QTest::keyClick(data, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(data->text(), QString());
        QCOMPARE(undo->index(), before);
        QCOMPARE(panel->thresholdEdit()->value(), uint64_t(2048));
    }

    // Item 3: opening another model, a drop and closing the window ask Save / Discard /
    // Cancel while pins or changed options are pending.
    void pendingWorkIsNotThrownAway()
    {
        QTemporaryDir dir;
        const auto [a, b] = twoModels(dir.path());
        QVERIFY(!a.isEmpty() && !b.isEmpty());
        auto window = std::make_unique<ui::MainWindow>();
        window->show();
        QVERIFY(QTest::qWaitForWindowExposed(window.get()));
        QVERIFY(open(*window, a));
        QVERIFY(!window->hasPendingWork());
        QVERIFY(pinAndSettle(
            *window, {tensorOf(*window, QStringLiteral("ext_c"))}, {Placement::Inline}));
        QVERIFY(window->hasPendingWork());

        {
            DialogAnswerer cancel(QStringLiteral("Cancel"));
            QVERIFY(!window->openFile(b));
            QCOMPARE(cancel.titles, QStringList{QStringLiteral("Save changes?")});
            QStringList buttons = cancel.buttons.value(0).split(u'|');
            buttons.sort(); // in the platform's order
            QCOMPARE(buttons,
                QStringList(
                    {QStringLiteral("Cancel"), QStringLiteral("Discard"), QStringLiteral("Save")}));
            QVERIFY2(cancel.texts.constFirst().contains(QStringLiteral("1 pinned tensor")),
                qPrintable(cancel.texts.constFirst()));
            QCOMPARE(window->currentPath(), a);
            QCOMPARE(window->placementState()->pinnedCount(), 1);
        }
        {
            // A drop asks once the drop is over.
            DialogAnswerer cancel(QStringLiteral("Cancel"));
            QMimeData mime;
            mime.setUrls({QUrl::fromLocalFile(b)});
            QDragEnterEvent enter(
                QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(window.get(), &enter);
            QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(window.get(), &drop);
            QTRY_COMPARE(cancel.titles, QStringList{QStringLiteral("Save changes?")});
            QVERIFY(!window->isLoading());
            QCOMPARE(window->currentPath(), a);
        }
        {
            // Closing: Cancel keeps the window and its pins.
            DialogAnswerer cancel(QStringLiteral("Cancel"));
            QVERIFY(!window->close());
            QVERIFY(window->isVisible());
            QCOMPARE(cancel.titles.size(), 1);
            QCOMPARE(window->placementState()->pinnedCount(), 1);
        }
        {
            // Changed options count too; Discard opens the other model.
            window->repackPanel()->checksumBox()->click();
            DialogAnswerer discard(QStringLiteral("Discard"));
            QSignalSpy opened(window.get(), &ui::MainWindow::modelOpened);
            QVERIFY(window->openFile(b));
            QVERIFY(opened.wait(60000));
            QVERIFY2(discard.texts.constFirst().contains(QStringLiteral("Write SHA-1 checksums")),
                qPrintable(discard.texts.constFirst()));
            QCOMPARE(window->currentPath(), b);
            QVERIFY(!window->hasPendingWork());
            QCOMPARE(placesOn(a).value(QStringLiteral("ext_c")), QStringLiteral("weights.bin@0"));
        }
        {
            // Save, then close: the window closes once the save succeeded.
            QVERIFY(settled(*window));
            typeSize(window->repackPanel()->thresholdEdit(), QStringLiteral("4"));
            QVERIFY(window->hasPendingWork());
            DialogAnswerer save(QStringLiteral("Save"));
            QSignalSpy finished(window.get(), &ui::MainWindow::saveFinished);
            QVERIFY(!window->close()); // not yet: the save runs first
            QVERIFY(finished.wait(60000));
            QCOMPARE(finished.constFirst().constFirst().toBool(), true);
            QTRY_VERIFY(!window->isVisible());
            QCOMPARE(placesOn(b).value(QStringLiteral("w1")), QStringLiteral("b.onnx.data@0"));
            QCOMPARE(save.titles, QStringList{QStringLiteral("Save changes?")});
        }
    }

    // Issue 49 item 3: a model in a folder the app ships (the bundled sample) is never written.
    // It opens read-only; Ctrl+S and the close prompt's Save offer Save As instead; a save into
    // its folder is refused; saved as a copy elsewhere, the window closes and the shipped files
    // keep every byte.
    void theShippedSampleIsOnlyEverSavedAs()
    {
        QTemporaryDir shipped;
        QTemporaryDir mine;
        QVERIFY(!uifixtures::writeMixedModel(shipped.path()).empty());
        const auto before = uifixtures::folderContents(shipped.path());
        const QString sample = shipped.filePath(QStringLiteral("model.onnx"));
        ui::addShippedFolder(shipped.path());
        auto window = std::make_unique<ui::MainWindow>();
        window->setAttribute(Qt::WA_DeleteOnClose, false);
        QVERIFY(windowsteps::showActive(*window));
        QVERIFY(open(*window, sample));
        QVERIFY(window->isReadOnly());
        QVERIFY2(window->windowTitle().contains(QStringLiteral("(read-only)")),
            qPrintable(window->windowTitle()));
        QVERIFY(pinAndSettle(
            *window, {tensorOf(*window, QStringLiteral("ext_c"))}, {Placement::Inline}));
        QVERIFY(window->hasPendingWork());
        {
            // Ctrl+S: the Save As dialog, closed here; nothing written.
            QTRY_VERIFY(window->saveAction()->isEnabled());
            QVERIFY2(window->saveAction()->toolTip().contains(QStringLiteral("Save As")),
                qPrintable(window->saveAction()->toolTip()));
            DialogAnswerer answerer;
            QTest::keyClick(window.get(), Qt::Key_S, Qt::ControlModifier);
            QTRY_COMPARE(answerer.titles, QStringList{QStringLiteral("Save Model As")});
            QVERIFY(!window->isSaving());
        }
        {
            // Its folder is refused, under the sample's name or another.
            DialogAnswerer answerer;
            QVERIFY(!window->saveTo(sample));
            QVERIFY(!window->saveTo(shipped.filePath(QStringLiteral("copy.onnx"))));
            QCOMPARE(answerer.titles,
                QStringList({QStringLiteral("Cannot save"), QStringLiteral("Cannot save")}));
        }
        QCOMPARE(uifixtures::folderContents(shipped.path()), before);
        {
            // Closing asks; its Save is Save As…, which writes the copy chosen, then closes.
            const QString copy = mine.filePath(QStringLiteral("copy.onnx"));
            DialogAnswerer answerer(QStringLiteral("Save As…"));
            answerer.saveFileAs(copy);
            QSignalSpy finished(window.get(), &ui::MainWindow::saveFinished);
            QVERIFY(!window->close()); // not yet: the copy is saved first
            QVERIFY(finished.wait(60000));
            QCOMPARE(finished.constFirst().constFirst().toBool(), true);
            QTRY_VERIFY(!window->isVisible());
            QCOMPARE(answerer.titles,
                QStringList({QStringLiteral("Save changes?"), QStringLiteral("Save Model As")}));
            QVERIFY2(answerer.buttons.constFirst().split(u'|').contains(QStringLiteral("Save As…")),
                qPrintable(answerer.buttons.constFirst()));
            QVERIFY(!answerer.buttons.constFirst().split(u'|').contains(QStringLiteral("Save")));
            QCOMPARE(placesOn(copy).value(QStringLiteral("ext_c")), QStringLiteral("inline"));
        }
        QCOMPARE(uifixtures::folderContents(shipped.path()), before);
    }

    // The folder window shows the sample's folder read-only: Save Folder is disabled saying
    // why, and a save asked for anyway writes nothing.
    void theShippedSampleFolderIsNeverSaved()
    {
        QTemporaryDir shipped;
        QVERIFY(!uifixtures::writeMixedModel(shipped.path()).empty());
        const auto before = uifixtures::folderContents(shipped.path());
        ui::addShippedFolder(shipped.path());
        ui::FolderWindow window;
        QSignalSpy inspected(&window, &ui::FolderWindow::inspected);
        window.openFolder(shipped.path());
        QVERIFY(inspected.wait(30000));
        QVERIFY(inspected.constFirst().value(0).toBool());
        QVERIFY(window.isReadOnly());
        QVERIFY(window.windowTitle().contains(QStringLiteral("(read-only)")));
        QVERIFY(!window.saveButton()->isEnabled());
        QVERIFY(!window.saveAction()->isEnabled());
        QVERIFY2(window.saveButton()->toolTip().contains(QStringLiteral("sample")),
            qPrintable(window.saveButton()->toolTip()));
        QSignalSpy saved(&window, &ui::FolderWindow::saved);
        DialogAnswerer answerer(QStringLiteral("Save and Remove"));
        window.confirmAndSave();
        window.saveShared(QStringLiteral("shared.bin"));
        QTest::qWait(200);
        QVERIFY(!window.isBusy());
        QVERIFY2(
            window.lastError().contains(QStringLiteral("sample")), qPrintable(window.lastError()));
        QCOMPARE(uifixtures::folderContents(shipped.path()), before);
    }

    // Item 3: File > Quit with two windows, both with pins: the first asks; after its Save
    // succeeded the quit goes on, the second asks and saves, and both close (closeAllWindows
    // alone stopped at the first one that asked).
    void quitGoesOnAfterSave()
    {
        QTemporaryDir dir;
        const auto [a, b] = twoModels(dir.path());
        QVERIFY(!a.isEmpty() && !b.isEmpty());
        ui::MainWindow first;
        ui::MainWindow second;
        for (ui::MainWindow* w : {&first, &second}) {
            w->show();
            QVERIFY(QTest::qWaitForWindowExposed(w));
        }
        QVERIFY(open(first, a));
        QVERIFY(open(second, b));
        QVERIFY(
            pinAndSettle(first, {tensorOf(first, QStringLiteral("ext_c"))}, {Placement::Inline}));
        QVERIFY(pinAndSettle(
            second, {tensorOf(second, QStringLiteral("w1"))}, {Placement::External, "b.bin"}));
        DialogAnswerer save(QStringLiteral("Save"));
        ui::MainWindow::quitAll();
        QTRY_VERIFY_WITH_TIMEOUT(!first.isVisible() && !second.isVisible(), 60000);
        QCOMPARE(save.titles,
            QStringList({QStringLiteral("Save changes?"), QStringLiteral("Save changes?")}));
        QCOMPARE(placesOn(a).value(QStringLiteral("ext_c")), QStringLiteral("inline"));
        QCOMPARE(placesOn(b).value(QStringLiteral("w1")), QStringLiteral("b.bin@0"));
    }

    // Item 4: a data file name, a threshold and the SHA-1 box typed for one model are not
    // pre-filled for the next; it starts from the core's defaults.
    void optionsDoNotLeakToTheNextModel()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        QVERIFY(!uifixtures::writeInlineModel(dir.path(), {100, 5000}, QStringLiteral("b.onnx"))
                     .empty());
        ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        ui::RepackPanel* panel = window.repackPanel();
        QTest::mouseClick(panel->dataFileEdit(), Qt::LeftButton);
        QTest::keyClicks(panel->dataFileEdit(), QStringLiteral("weights.bin"));
        typeSize(panel->thresholdEdit(), QStringLiteral("5"));
        panel->thresholdEdit()->unitBox()->setCurrentIndex(2); // MiB
        QTest::mouseClick(panel->checksumBox(), Qt::LeftButton, {},
            QPoint(8, panel->checksumBox()->height() / 2));
        QCOMPARE(panel->thresholdEdit()->value(), uint64_t(5) << 20);
        QVERIFY(panel->checksumBox()->isChecked());

        DialogAnswerer discard(QStringLiteral("Discard"));
        QVERIFY(open(window, dir.filePath(QStringLiteral("b.onnx"))));
        const repack::SaveOptions defaults;
        QCOMPARE(panel->dataFileEdit()->text(), QString());
        QCOMPARE(panel->thresholdEdit()->value(), defaults.threshold);
        QCOMPARE(panel->checksumBox()->isChecked(), defaults.checksum);
        QVERIFY(panel->keepsPlacement());
        QVERIFY(!window.hasPendingWork());
        QCOMPARE(window.placementState()->undoStack()->count(), 0);
    }
};

QTEST_MAIN(TestUserWork)
#include "tst_user_work.moc"
