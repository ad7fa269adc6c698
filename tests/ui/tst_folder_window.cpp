// The folder window (File > Open Folder…, a dropped folder): the graphs, data files, shared
// weights and problems of a folder of graphs; the bytes a shared data file saves, said before
// saving; the save as one unit in the background, and the folder shown as it is afterwards;
// consent asked as the single save asks it; a window showing one of the graphs meanwhile.
#include "core/save/folder_save.h"
#include "core/save_lock.h"
#include "tests/support/folder_fixtures.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"
#include "tests/ui/dialog_answerer.h"
#include "tests/ui/window_steps.h"
#include "ui/models/tensor_table_model.h"
#include "ui/util/display_name.h"
#include "ui/views/elided_label.h"
#include "ui/views/folder_map.h"
#include "ui/views/repack_panel.h"
#include "ui/views/size_edit.h"
#include "ui/windows/folder_window.h"
#include "ui/windows/main_window.h"
#include "ui/windows/open_windows.h"

#include <QAction>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <optional>

using namespace fixtures;

namespace {

// Two graphs repeating a 4 KiB embedding, each in its own data file.
bool writeFolder(const QString& dir)
{
    const std::string embed = patternBytes(4096, 3);
    const std::vector<Weight> encoder{{"embed", embed}, {"enc", patternBytes(2000, 4)}};
    const std::vector<Weight> decoder{{"embed", embed}, {"dec", patternBytes(3000, 5)}};
    if (!writeGraph(dir, "encoder.onnx", "encoder.onnx_data", encoder))
        return false;
    return writeGraph(dir, "decoder.onnx", "decoder.onnx_data", decoder);
}

// The folder's graphs, and sub/c.onnx, no graph of the folder, reading sub/s.data: a shared
// file named sub/s.data would make c read wrong bytes.
bool writeFolderWithAReaderBelow(const QString& dir)
{
    if (!writeFolder(dir) || !QDir(dir).mkpath(QStringLiteral("sub")))
        return false;
    return writeGraph(QDir(dir).filePath(QStringLiteral("sub")), "c.onnx", "s.data",
        {{"other", patternBytes(2048, 8)}});
}

// Every file under `dir` (relative name -> bytes).
QMap<QString, QByteArray> contents(const QString& dir)
{
    QMap<QString, QByteArray> files;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        QFile file(it.next());
        if (file.open(QIODevice::ReadOnly))
            files.insert(QDir(dir).relativeFilePath(file.fileName()), file.readAll());
    }
    return files;
}

// Types `name` into the shared name field, as a user does.
void typeSharedName(ui::FolderWindow& window, const QString& name)
{
    window.sharedNameEdit()->selectAll();
    QTest::keyClick(window.sharedNameEdit(), Qt::Key_Delete);
    QTest::keyClicks(window.sharedNameEdit(), name);
}

QStringList column(const QTableWidget* table, int column)
{
    QStringList out;
    for (int r = 0; r < table->rowCount(); ++r)
        out << table->item(r, column)->text();
    return out;
}

} // namespace

class TestFolderWindow : public QObject {
    Q_OBJECT

private slots:
    void showsTheFolderAndSavesItAsOneUnit()
    {
        QTemporaryDir dir;
        QVERIFY(writeFolder(dir.path()));
        ui::FolderWindow window;
        window.show();
        QSignalSpy inspected(&window, &ui::FolderWindow::inspected);
        window.openFolder(dir.path());
        QVERIFY(inspected.wait(20000));
        QCOMPARE(inspected.takeFirst().at(0).toBool(), true);
        QCOMPARE(column(window.graphsTable(), 0), QStringList({"decoder.onnx", "encoder.onnx"}));
        QCOMPARE(column(window.filesTable(), 2), QStringList({"decoder.onnx", "encoder.onnx"}));
        QCOMPARE(window.sharedTable()->rowCount(), 1);
        QCOMPARE(window.sharedTable()->item(0, 1)->text(), QString("2")); // two copies
        QVERIFY(column(window.problemsTable(), 2).contains("duplicated-content"));
        // The map: each graph's own file, the embedding hatched in both (stored twice).
        const auto& files = window.mapView()->files();
        QCOMPARE(int(files.size()), 2);
        for (int g = 0; g < 2; ++g) {
            const ui::FolderMapFile& f = files[size_t(g)];
            QCOMPARE(f.location, QString(g == 0 ? "decoder.onnx_data" : "encoder.onnx_data"));
            QCOMPARE(int(f.ranges.size()), 2);
            QVERIFY(f.ranges[0].duplicated && f.ranges[0].length == 4096); // the embedding
            QVERIFY(!f.ranges[1].duplicated);
            for (const ui::FolderMapRange& r : f.ranges)
                QCOMPARE(r.readers, std::vector<int>{g});
        }
        // A range clicked selects the graphs that hold its content: the embedding, both; the
        // decoder's own weight, the decoder.
        window.graphsTable()->clearSelection();
        QTest::mouseClick(
            window.mapView(), Qt::LeftButton, {}, window.mapView()->rangeRect(0, 0).center());
        QCOMPARE(window.graphsTable()->selectionModel()->selectedRows().size(), 2);
        QTest::mouseClick(
            window.mapView(), Qt::LeftButton, {}, window.mapView()->rangeRect(0, 1).center());
        const auto selected = window.graphsTable()->selectionModel()->selectedRows();
        QCOMPARE(selected.size(), 1);
        QCOMPARE(selected.front().row(), 0); // decoder.onnx
        // A shared weight selected selects the graphs that hold it.
        window.graphsTable()->clearSelection();
        QTest::mouseClick(window.sharedTable()->viewport(), Qt::LeftButton, {},
            window.sharedTable()->visualItemRect(window.sharedTable()->item(0, 2)).center());
        QCOMPARE(window.graphsTable()->selectionModel()->selectedRows().size(), 2);
        // The savings are said before saving.
        QTRY_VERIFY_WITH_TIMEOUT(window.savingsLabel()->text().contains("after"), 20000);

        window.sharedNameEdit()->setText("shared.bin");
        // Save names the data files it would remove first: Cancel writes nothing.
        const auto before = contents(dir.path());
        DialogAnswerer answerer(QStringList{"Cancel", "Save and Remove"});
        QSignalSpy saved(&window, &ui::FolderWindow::saved);
        QTest::mouseClick(window.saveButton(), Qt::LeftButton);
        QTRY_COMPARE(saved.count(), 1);
        QCOMPARE(saved.takeFirst().at(0).toBool(), false);
        QCOMPARE(answerer.titles, QStringList{"Remove data files?"});
        for (const char* removed : {"decoder.onnx_data", "encoder.onnx_data"})
            QVERIFY2(answerer.texts.first().contains(removed), qPrintable(answerer.texts.first()));
        QVERIFY(contents(dir.path()) == before);
        QVERIFY(!window.isBusy());
        QTest::mouseClick(window.saveButton(), Qt::LeftButton);
        QVERIFY(saved.wait(30000));
        QVERIFY2(saved.takeFirst().at(0).toBool(), qPrintable(window.lastError()));
        QCOMPARE(answerer.titles.size(), 2);
        QVERIFY(inspected.wait(20000)); // the folder as it is now
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files),
            QStringList({"decoder.onnx", "encoder.onnx", "shared.bin"}));
        QCOMPARE(QFileInfo(dir.filePath("shared.bin")).size(), qint64(4096 + 2000 + 3000));
        QCOMPARE(column(window.filesTable(), 0), QStringList{"shared.bin"});
        QCOMPARE(window.sharedTable()->item(0, 1)->text(), QString("1")); // one copy now
        // One file now: the embedding read by both graphs, stored once; the rest by one each.
        const auto& shared = window.mapView()->files();
        QCOMPARE(int(shared.size()), 1);
        QCOMPARE(int(shared[0].ranges.size()), 3);
        int both = 0;
        for (const ui::FolderMapRange& r : shared[0].ranges) {
            QVERIFY(!r.duplicated);
            if (r.readers == std::vector<int>{0, 1}) {
                ++both;
                QCOMPARE(r.length, uint64_t(4096));
            } else {
                QCOMPARE(int(r.readers.size()), 1);
            }
        }
        QCOMPARE(both, 1);
        QVERIFY(!column(window.problemsTable(), 2).contains("duplicated-content"));
        // What was written, not "nothing to change" (what a save would do now).
        QTRY_VERIFY_WITH_TIMEOUT(
            window.savingsLabel()->text().startsWith("Saved 2 graph(s) and shared.bin: "), 20000);
        QVERIFY2(window.savingsLabel()->text().contains(
                     "written; 2 data file(s) no model reads removed"),
            qPrintable(window.savingsLabel()->text()));
        // Another name typed: the plan of that save again.
        typeSharedName(window, QStringLiteral("other.bin"));
        QTRY_VERIFY_WITH_TIMEOUT(window.savingsLabel()->text().contains("after"), 20000);
    }

    // Issue 36 item 5: Cancel stays where it was when the progress bar appears (a click where
    // the user aimed lands on it), a cancelled save leaves Save Folder usable at once (the
    // folder, unchanged, is not read again first), and the next save says what it wrote.
    void cancelStaysInPlaceAndSaveIsUsableOnceCancelled()
    {
        QTemporaryDir dir;
        QVERIFY(writeFolder(dir.path()));
        ui::FolderWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy inspected(&window, &ui::FolderWindow::inspected);
        window.openFolder(dir.path());
        QVERIFY(inspected.wait(20000));
        auto* save = window.findChild<QPushButton*>(QStringLiteral("saveFolder"));
        auto* cancel = window.findChild<QPushButton*>(QStringLiteral("cancelSave"));
        auto* bar = window.findChild<QProgressBar*>(QStringLiteral("saveProgress"));
        auto* name = window.findChild<QLineEdit*>(QStringLiteral("sharedName"));
        QVERIFY(save && cancel && bar && name);
        name->selectAll();
        QTest::keyClicks(name, QStringLiteral("shared.bin"));
        const QRect cancelRect(cancel->mapTo(&window, QPoint()), cancel->size());

        // Another save holds the folder: this one waits for it, cancellable.
        auto held = repack::FolderLock::acquire({dir.path().toStdString()}, 0);
        QVERIFY(held);
        std::optional<repack::FolderLock> lock(std::move(*held));
        const auto before = contents(dir.path());
        DialogAnswerer answerer(QStringLiteral("Save and Remove"));
        QSignalSpy saved(&window, &ui::FolderWindow::saved);
        QTest::mouseClick(save, Qt::LeftButton);
        QVERIFY(bar->isVisible());
        QVERIFY(cancel->isEnabled());
        QCOMPARE(QRect(cancel->mapTo(&window, QPoint()), cancel->size()), cancelRect);
        // Clicked through the window where Cancel was before the bar appeared.
        QTest::mouseClick(window.windowHandle(), Qt::LeftButton, {}, cancelRect.center());
        QVERIFY(saved.wait(20000));
        QCOMPARE(saved.takeFirst().at(0).toBool(), false);
        QVERIFY(!window.isBusy());
        QVERIFY(save->isEnabled());
        QVERIFY(!bar->isVisible());
        QVERIFY(contents(dir.path()) == before);

        lock.reset();
        QTest::mouseClick(save, Qt::LeftButton);
        QVERIFY(saved.wait(30000));
        QVERIFY2(saved.takeFirst().at(0).toBool(), qPrintable(window.lastError()));
        QTRY_VERIFY_WITH_TIMEOUT(
            window.savingsLabel()->text().startsWith("Saved 2 graph(s) and shared.bin: "), 20000);
        QCOMPARE(QRect(cancel->mapTo(&window, QPoint()), cancel->size()), cancelRect);
    }

    // Issue 36 item 5: graphs that already share one data file propose it, not a new default
    // name, and say there is nothing to change; saving with it writes nothing (the shared file
    // and the models keep their inode and mtime).
    void graphsThatShareAFileProposeIt()
    {
        QTemporaryDir dir;
        QVERIFY(writeFolder(dir.path()));
        repack::FolderSaveOptions options;
        options.sharedData = "weights.bin";
        const std::string path = dir.path().toStdString();
        auto shared = repack::saveFolder(path, path, options);
        QVERIFY2(shared.ok(), shared ? "" : shared.error().message.c_str());
        const QStringList before = fixtures::fileStamps(dir.path());

        ui::FolderWindow window;
        window.show();
        QSignalSpy inspected(&window, &ui::FolderWindow::inspected);
        window.openFolder(dir.path());
        QVERIFY(inspected.wait(20000));
        auto* name = window.findChild<QLineEdit*>(QStringLiteral("sharedName"));
        auto* savings = window.findChild<QLabel*>(QStringLiteral("savings"));
        QVERIFY(name && savings);
        QCOMPARE(name->text(), QStringLiteral("weights.bin"));
        QTRY_COMPARE_WITH_TIMEOUT(savings->text(), QStringLiteral("nothing to change"), 20000);

        QSignalSpy saved(&window, &ui::FolderWindow::saved);
        QTest::mouseClick(
            window.findChild<QPushButton*>(QStringLiteral("saveFolder")), Qt::LeftButton);
        QVERIFY(saved.wait(30000));
        QVERIFY2(saved.takeFirst().at(0).toBool(), qPrintable(window.lastError()));
        QCOMPARE(fixtures::fileStamps(dir.path()), before);
        QTRY_COMPARE_WITH_TIMEOUT(
            savings->text(), QStringLiteral("nothing to change: nothing written"), 20000);
    }

    // Issue 36 item 5: `onnx-repack-gui DIR` (app/gui_main.cpp opens its arguments with
    // ui::openWindows) opens the folder window, not a main window refusing a directory.
    void aFolderArgumentOpensTheFolderWindow()
    {
        QTemporaryDir dir;
        QVERIFY(writeFolder(dir.path()));
        const QList<QWidget*> windows = ui::openWindows({dir.path()});
        QCOMPARE(windows.size(), 1);
        QPointer<ui::FolderWindow> folder = qobject_cast<ui::FolderWindow*>(windows.first());
        QVERIFY(folder);
        QVERIFY(folder->isVisible());
        QCOMPARE(folder->folder(), QDir(dir.path()).absolutePath());
        QCOMPARE(folder->windowTitle(),
            QStringLiteral("Folder %1 — Onnx Repack").arg(ui::displayName(dir.path())));
        QTRY_COMPARE_WITH_TIMEOUT(folder->graphsTable()->rowCount(), 2, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(!folder->isBusy(), 20000);
        // A click on a graph selects it, as in any folder window.
        QTest::mouseClick(folder->graphsTable()->viewport(), Qt::LeftButton, {},
            folder->graphsTable()->visualItemRect(folder->graphsTable()->item(1, 0)).center());
        QCOMPARE(folder->graphsTable()->currentRow(), 1);
        folder->close(); // and deleted
        QTRY_VERIFY(folder.isNull());
    }

    // Issue 35: a shared file that a model outside the folder's graphs reads (sub/c.onnx reads
    // sub/s.data) is replaced only with consent, asked as the single save asks it: the dialog
    // names c.onnx; Cancel writes nothing, Replace saves with force, "Write <name> Instead"
    // saves under a name no file has and leaves c's file alone.
    void aSaveThatNeedsConsentAsksAsTheSingleSaveDoes_data()
    {
        QTest::addColumn<QString>("answer");
        QTest::addRow("cancel writes nothing") << QStringLiteral("Cancel");
        QTest::addRow("replace saves with force") << QStringLiteral("Replace");
        QTest::addRow("a free name instead") << QStringLiteral("Write sub/s-2.data Instead");
    }
    void aSaveThatNeedsConsentAsksAsTheSingleSaveDoes()
    {
        QFETCH(QString, answer);
        QTemporaryDir dir;
        QVERIFY(writeFolderWithAReaderBelow(dir.path()));
        const auto before = contents(dir.path());
        ui::FolderWindow window;
        window.show();
        QSignalSpy inspected(&window, &ui::FolderWindow::inspected);
        window.openFolder(dir.path());
        QVERIFY(inspected.wait(20000));
        typeSharedName(window, QStringLiteral("sub/s.data"));

        DialogAnswerer answerer(QStringList{QStringLiteral("Save and Remove"), answer});
        QSignalSpy saved(&window, &ui::FolderWindow::saved);
        QTest::mouseClick(window.saveButton(), Qt::LeftButton);
        QVERIFY(saved.wait(60000));
        QCOMPARE(answerer.titles,
            QStringList(
                {QStringLiteral("Remove data files?"), QStringLiteral("Replace data file?")}));
        QVERIFY2(answerer.texts.last().contains(QStringLiteral(
                     "c.onnx reads s.data: after this save it would read wrong weights")),
            qPrintable(answerer.texts.last()));
        const QStringList buttons = answerer.buttons.last().split(u'|');
        for (const QString& button : {QStringLiteral("Replace"),
                 QStringLiteral("Write sub/s-2.data Instead"), QStringLiteral("Cancel")})
            QVERIFY2(buttons.contains(button), qPrintable(answerer.buttons.first()));
        QCOMPARE(saved.count(), 1);
        const bool ok = saved.first().at(0).toBool();
        const auto after = contents(dir.path());
        if (answer == QStringLiteral("Cancel")) {
            QVERIFY(!ok);
            QCOMPARE(after.keys(), before.keys());
            QVERIFY(after == before);
            return;
        }
        QVERIFY2(ok, qPrintable(window.lastError()));
        const QString shared = answer == QStringLiteral("Replace") ? QStringLiteral("sub/s.data")
                                                                   : QStringLiteral("sub/s-2.data");
        QCOMPARE(QFileInfo(dir.filePath(shared)).size(), qint64(4096 + 2000 + 3000));
        QVERIFY(!after.contains(QStringLiteral("encoder.onnx_data")));
        QCOMPARE(
            after.value(QStringLiteral("sub/c.onnx")), before.value(QStringLiteral("sub/c.onnx")));
        if (answer != QStringLiteral("Replace")) {
            QCOMPARE(after.value(QStringLiteral("sub/s.data")),
                before.value(QStringLiteral("sub/s.data")));
            QCOMPARE(window.sharedNameEdit()->text(), shared); // the field says what was saved
        }
    }

    // Issue 35: a window showing a graph of the folder lends its model to the folder save (it
    // runs no job on it meanwhile), then shows the saved layout: no error, no question when it
    // has nothing pending; with changed options pending it asks, as for any change on disk.
    void aWindowShowingAGraphShowsTheSavedLayout_data()
    {
        QTest::addColumn<bool>("pending");
        QTest::addRow("nothing pending") << false;
        QTest::addRow("options changed") << true;
    }
    void aWindowShowingAGraphShowsTheSavedLayout()
    {
        QFETCH(bool, pending);
        QTemporaryDir dir;
        QVERIFY(writeFolder(dir.path()));
        ui::MainWindow main;
        main.show();
        QVERIFY(windowsteps::open(main, dir.filePath(QStringLiteral("encoder.onnx"))));
        if (pending) {
            main.repackPanel()->thresholdEdit()->setValue(8192);
            QVERIFY(main.hasPendingWork());
        }
        ui::FolderWindow* folder = main.openFolder(dir.path());
        QTRY_COMPARE_WITH_TIMEOUT(folder->graphsTable()->rowCount(), 2, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(!folder->isBusy(), 20000);
        typeSharedName(*folder, QStringLiteral("shared.bin"));

        DialogAnswerer answerer(
            QStringList{QStringLiteral("Save and Remove"), QStringLiteral("Yes")});
        QSignalSpy saved(folder, &ui::FolderWindow::saved);
        QSignalSpy reopened(&main, &ui::MainWindow::modelOpened);
        QTest::mouseClick(folder->saveButton(), Qt::LeftButton);
        // The folder save holds the window's model: nothing opens, plans or saves it meanwhile.
        QVERIFY(main.isSaving());
        QVERIFY(!main.saveAction()->isEnabled());
        QVERIFY(saved.wait(60000));
        QVERIFY2(saved.first().at(0).toBool(), qPrintable(folder->lastError()));
        QTRY_COMPARE_WITH_TIMEOUT(reopened.count(), 1, 30000);
        QVERIFY(windowsteps::settled(main));
        const int enc = windowsteps::tensorOf(main, QStringLiteral("enc"));
        QVERIFY(enc >= 0);
        QCOMPARE(main.tensorModel()->index(enc, ui::TensorTableModel::Storage).data().toString(),
            QStringLiteral("shared.bin"));
        QVERIFY2(main.lastError().isEmpty(), qPrintable(main.lastError()));
        QTest::qWait(800); // a change on disk would be noticed by now (the watch waits 400 ms)
        const QStringList asked = QStringList{QStringLiteral("Remove data files?")}
            + (pending ? QStringList{QStringLiteral("Model changed on disk")} : QStringList{});
        QCOMPARE(answerer.titles, asked);
        QVERIFY(!main.isSaving());
        QVERIFY(!main.hasPendingWork());
    }

    void aFolderDroppedOnTheMainWindowOpensAsOneUnit()
    {
        QTemporaryDir dir;
        QVERIFY(writeFolder(dir.path()));
        ui::MainWindow main;
        main.show();
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(dir.path())});
        QDragEnterEvent enter(
            QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&main, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&main, &drop);
        auto* window = main.findChild<ui::FolderWindow*>();
        QVERIFY(window);
        QCOMPARE(window->folder(), QDir(dir.path()).absolutePath());
        QTRY_COMPARE_WITH_TIMEOUT(window->graphsTable()->rowCount(), 2, 20000);
    }

    // The tables of a three-graph folder show every row, none cut, without scrolling.
    void theTablesOfAThreeGraphFolderShowEveryRow()
    {
        QTemporaryDir dir;
        const std::string embed = patternBytes(4096, 3);
        for (const char* graph : {"encoder_model", "decoder_model", "decoder_with_past_model"})
            QVERIFY(writeGraph(dir.path(), QString::fromLatin1(graph) + QStringLiteral(".onnx"),
                std::string(graph) + ".onnx_data", {{"embed", embed}}));
        ui::FolderWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy inspected(&window, &ui::FolderWindow::inspected);
        window.openFolder(dir.path());
        QVERIFY(inspected.wait(20000));
        QTest::qWait(50); // the splitter lays the panes out
        for (QTableWidget* table : {window.graphsTable(), window.filesTable()}) {
            QCOMPARE(table->rowCount(), 3);
            const QRect last = table->visualItemRect(table->item(2, 0));
            QVERIFY2(last.bottom() < table->viewport()->height(),
                qPrintable(QStringLiteral("row 3 ends at %1 of %2 px")
                               .arg(last.bottom())
                               .arg(table->viewport()->height())));
            QCOMPARE(table->verticalScrollBar()->maximum(), 0);
        }
    }

    // A menu bar as the main window's: File > Save Folder (Ctrl+S, which asks as the button
    // does), Open Recent, Close (Ctrl+W); Help > About.
    void theFolderWindowHasAMenuBarAsTheMainWindows()
    {
        QTemporaryDir dir;
        QVERIFY(writeFolder(dir.path()));
        ui::FolderWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy inspected(&window, &ui::FolderWindow::inspected);
        window.openFolder(dir.path());
        QVERIFY(inspected.wait(20000));
        QStringList menus;
        for (QAction* action : window.menuBar()->actions())
            menus << action->text().remove(u'&');
        QCOMPARE(menus, QStringList({"File", "Help"}));
        auto texts = [](QMenu* menu) {
            QStringList out;
            for (QAction* action : menu->actions())
                if (!action->isSeparator() && action->isVisible())
                    out << action->text().remove(u'&');
            return out;
        };
        QMenu* file = window.menuBar()->actions().at(0)->menu();
        QCOMPARE(texts(file), QStringList({"Save Folder", "Open Recent", "Close"}));
        QVERIFY(window.findChild<QMenu*>(QStringLiteral("recentMenu")));
        QCOMPARE(texts(window.menuBar()->actions().at(1)->menu()),
            QStringList({"About Onnx Repack", "About Qt"}));

        QTRY_VERIFY(window.saveAction()->isEnabled());
        QCOMPARE(window.saveAction()->shortcut(), QKeySequence(QKeySequence::Save));
        // Ctrl+S asks as the button does; Cancel writes nothing.
        const auto before = contents(dir.path());
        DialogAnswerer answerer(QStringLiteral("Cancel"));
        QSignalSpy saved(&window, &ui::FolderWindow::saved);
        QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier);
        QTRY_COMPARE(saved.count(), 1);
        QCOMPARE(answerer.titles, QStringList{"Remove data files?"});
        QVERIFY(contents(dir.path()) == before);
        QAction* close = file->actions().last();
        QCOMPARE(close->shortcut(), QKeySequence(QKeySequence::Close));
        close->trigger();
        QTRY_VERIFY(!window.isVisible());
    }

    // A long status (a save's report, an error naming a long path) is cut at its end with the
    // whole text in its tooltip: the window keeps its width and the shared name field its room.
    void aLongStatusNeitherWidensTheWindowNorSqueezesTheName()
    {
        QTemporaryDir dir;
        QVERIFY(writeFolder(dir.path()));
        ui::FolderWindow window;
        window.resize(780, 560);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy inspected(&window, &ui::FolderWindow::inspected);
        window.openFolder(dir.path());
        QVERIFY(inspected.wait(20000));
        QTRY_VERIFY(!window.savingsLabel()->text().isEmpty());
        const int width = window.width();
        const int nameWidth = window.sharedNameEdit()->width();
        const QString text = QStringLiteral("Cannot save: ")
            + QStringLiteral("/models/a-folder-with-a-long-name/").repeated(8)
            + QStringLiteral("model.onnx_data is not writable");
        window.savingsLabel()->setText(text);
        QTest::qWait(50); // the layout takes the new text
        QCOMPARE(window.width(), width);
        QVERIFY(window.sharedNameEdit()->width() >= nameWidth);
        QCOMPARE(window.savingsLabel()->text(), text);
        auto* label = qobject_cast<ui::ElidedLabel*>(window.savingsLabel());
        QVERIFY(label);
        QVERIFY(label->isElided());
        QVERIFY(label->shownToolTip().startsWith(text));
    }
};

QTEST_MAIN(TestFolderWindow)
#include "tst_folder_window.moc"
