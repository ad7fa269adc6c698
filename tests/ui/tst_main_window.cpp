// The main window on generated models: models open on a worker while the window keeps the
// current one, dropping a file opens it, a broken model shows its problems, a background save
// refreshes table and map to what is then on disk, a save that would replace a file other models
// read (or no model uses) asks first and names those models, a cancelled or refused save leaves
// the original files byte-identical, a save whose source file was replaced behind its back
// writes nothing, "saved with a warning" is told apart from "not saved", and the problems panel
// shows the leftovers of dead saves.
#include "ui_fixtures.h"

#include "core/model/model.h"
#include "core/save_lock.h"
#include "tests/support/result_checks.h"
#include "ui/models/problems_model.h"
#include "ui/models/tensor_filter_proxy.h"
#include "ui/models/tensor_table_model.h"
#include "ui/util/display_name.h"
#include "ui/util/settings_store.h"
#include "ui/views/layout_map_view.h"
#include "ui/views/repack_panel.h"
#include "ui/views/size_edit.h"
#include "ui/windows/main_window.h"

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QUrl>
#include <QtTest>

#include <filesystem>
#include <optional>

using ui::TensorTableModel;

class TestMainWindow : public QObject {
    Q_OBJECT

private:
    // Closes any dialog that pops up (a test must never hang on one) and remembers its title,
    // its text and whether its default button was Cancel; with m_answerYes, a question is
    // answered Yes (or Replace) instead.
    QTimer m_dialogCloser;
    QStringList m_dialogs;
    QStringList m_dialogTexts;
    QList<bool> m_cancelIsDefault;
    QStringList m_dialogButtons; // each dialog's button texts, joined by '|'
    bool m_answerYes = false;
    QString m_clickButton; // a button to click by its text, when set

    static QAbstractButton* acceptingButton(QMessageBox* box)
    {
        for (QAbstractButton* button : box->buttons()) {
            const auto role = box->buttonRole(button);
            if (role == QMessageBox::YesRole || role == QMessageBox::AcceptRole
                || role == QMessageBox::DestructiveRole)
                return button;
        }
        return nullptr;
    }

    static int sourceRowOf(const ui::MainWindow& window, const QString& name)
    {
        const auto& rows = window.snapshot().tensors;
        for (int i = 0; i < rows.size(); ++i) {
            if (rows[i].name == name)
                return i;
        }
        return -1;
    }

    // Opens `path` and waits for the window to show it.
    static bool open(ui::MainWindow& window, const QString& path)
    {
        QSignalSpy opened(&window, &ui::MainWindow::modelOpened);
        return window.openFile(path, true) && opened.wait(60000);
    }

    static void drop(ui::MainWindow& window, const QList<QUrl>& urls)
    {
        QMimeData mime;
        mime.setUrls(urls);
        QDragEnterEvent enter(
            QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &enter);
        QDropEvent dropEvent(
            QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &dropEvent);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("onnx-repack-tests"));
        m_dialogCloser.setInterval(50);
        connect(&m_dialogCloser, &QTimer::timeout, this, [this] {
            if (QWidget* modal = QApplication::activeModalWidget()) {
                m_dialogs << modal->windowTitle();
                auto* box = qobject_cast<QMessageBox*>(modal);
                m_dialogTexts << (box
                        ? box->text() + u'\n' + box->informativeText() + u'\n' + box->detailedText()
                        : QString());
                m_cancelIsDefault << (box && box->defaultButton()
                    && box->defaultButton() == box->button(QMessageBox::Cancel));
                QStringList buttons;
                for (QAbstractButton* button : box ? box->buttons() : QList<QAbstractButton*>())
                    buttons << button->text().remove(u'&');
                m_dialogButtons << buttons.join(u'|');
                QAbstractButton* yes = box ? acceptingButton(box) : nullptr;
                for (QAbstractButton* button : box ? box->buttons() : QList<QAbstractButton*>())
                    if (!m_clickButton.isEmpty() && button->text().remove(u'&') == m_clickButton)
                        yes = button;
                if ((m_answerYes || !m_clickButton.isEmpty()) && yes)
                    yes->click();
                else
                    modal->close();
            }
        });
        m_dialogCloser.start();
    }

    void init()
    {
        m_dialogs.clear();
        m_dialogTexts.clear();
        m_cancelIsDefault.clear();
        m_dialogButtons.clear();
        m_answerYes = false;
        m_clickButton.clear();
        // No model's remembered options: every model starts from the defaults.
        ui::writeSettings({{QStringLiteral("modelOptions"), QVariantMap()}});
    }

    // Issue 27 item 8: two windows of models with one file name tell their folders apart.
    void theTitleNamesTheFolder()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("encoder")));
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("decoder")));
        QStringList titles;
        for (const char* folder : {"encoder", "decoder"}) {
            const QString sub = QDir(dir.path()).filePath(QString::fromLatin1(folder));
            QVERIFY(!uifixtures::writeMixedModel(sub, QStringLiteral("model.onnx")).empty());
            ui::MainWindow window;
            QVERIFY(open(window, QDir(sub).filePath(QStringLiteral("model.onnx"))));
            QVERIFY2(window.windowTitle().contains(QStringLiteral("model.onnx"))
                    && window.windowTitle().contains(QString::fromLatin1(folder)),
                qPrintable(window.windowTitle()));
            titles << window.windowTitle();
        }
        QVERIFY(titles[0] != titles[1]);
    }

    // Issue 36 item 4: x/a/model.onnx and y/a/model.onnx read apart wherever a window names
    // them: the titles of two windows side by side, the Save prompt before opening one over the
    // other, and File > Open Recent, each naming the folder as a path.
    void modelsOfOneNameInFoldersOfOneNameReadApart()
    {
        QTemporaryDir dir;
        const QString x = QDir(dir.path()).filePath(QStringLiteral("x/a"));
        const QString y = QDir(dir.path()).filePath(QStringLiteral("y/a"));
        for (const QString& sub : {x, y}) {
            QVERIFY(QDir().mkpath(sub));
            QVERIFY(!uifixtures::writeMixedModel(sub, QStringLiteral("model.onnx")).empty());
        }
        const QString xModel = QDir(x).filePath(QStringLiteral("model.onnx"));
        const QString yModel = QDir(y).filePath(QStringLiteral("model.onnx"));
        ui::MainWindow left;
        ui::MainWindow right;
        left.show();
        right.show();
        QVERIFY(open(left, xModel));
        QVERIFY(open(right, yModel));
        const QString xFolder = QDir::toNativeSeparators(QStringLiteral("x/a)"));
        const QString yFolder = QDir::toNativeSeparators(QStringLiteral("y/a)"));
        QVERIFY2(left.windowTitle().contains(QStringLiteral("model.onnx ("))
                && left.windowTitle().contains(xFolder),
            qPrintable(left.windowTitle()));
        QVERIFY2(right.windowTitle().contains(yFolder), qPrintable(right.windowTitle()));
        QVERIFY(left.windowTitle() != right.windowTitle());

        // The recent entries name the folders too, and a click on one opens that model.
        auto* recent = right.findChild<QMenu*>(QStringLiteral("recentMenu"));
        QVERIFY(recent);
        recent->popup(right.mapToGlobal(QPoint(20, 20)));
        QVERIFY(QTest::qWaitForWindowExposed(recent));
        const QList<QAction*> entries = recent->actions();
        QVERIFY(entries.size() >= 2);
        QVERIFY2(entries[0]->text().startsWith(QStringLiteral("model.onnx ("))
                && entries[0]->text().endsWith(yFolder),
            qPrintable(entries[0]->text()));
        QVERIFY2(entries[1]->text().endsWith(xFolder), qPrintable(entries[1]->text()));
        QCOMPARE(entries[1]->toolTip(), QDir::toNativeSeparators(xModel));

        // With a change pending, the prompt says which model is saved before which opens.
        QTest::keyClicks(right.repackPanel()->dataFileEdit(), QStringLiteral("weights.bin"));
        QVERIFY(right.hasPendingWork());
        QTest::mouseClick(recent, Qt::LeftButton, {}, recent->actionGeometry(entries[1]).center());
        QTRY_COMPARE(m_dialogs, QStringList{QStringLiteral("Save changes?")});
        QVERIFY2(m_dialogTexts.first().startsWith(
                     QStringLiteral("Save %1 with your changes before "
                                    "opening %2?")
                         .arg(ui::displayName(yModel), ui::displayName(xModel))),
            qPrintable(m_dialogTexts.first()));
        QVERIFY(ui::displayName(yModel).endsWith(yFolder));
        QVERIFY(ui::displayName(xModel).endsWith(xFolder));
        QCOMPARE(right.currentPath(), yModel); // closed: Cancel

        // Nothing pending (the other window): the entry opens the model.
        auto* leftRecent = left.findChild<QMenu*>(QStringLiteral("recentMenu"));
        QVERIFY(leftRecent);
        QSignalSpy opened(&left, &ui::MainWindow::modelOpened);
        leftRecent->popup(left.mapToGlobal(QPoint(20, 20)));
        QVERIFY(QTest::qWaitForWindowExposed(leftRecent));
        QAction* yEntry = leftRecent->actions().value(0);
        QVERIFY(yEntry && yEntry->text().endsWith(yFolder));
        QTest::mouseClick(
            leftRecent, Qt::LeftButton, {}, leftRecent->actionGeometry(yEntry).center());
        QVERIFY(opened.wait(60000));
        QCOMPARE(opened.first().first().toString(), yModel);
        QCOMPARE(left.windowTitle(), right.windowTitle());
        QCOMPARE(m_dialogs.size(), 1);
    }

    // The display name (ui/util/display_name.h): the home folder as "~", a long folder elided in
    // the middle, keeping its start and the folders nearest the file.
    void displayNamesShowTheFolderAsAPath()
    {
        const QString home = QDir::homePath();
        QCOMPARE(ui::displayName(home + QStringLiteral("/x/a/model.onnx")),
            QDir::toNativeSeparators(QStringLiteral("model.onnx (~/x/a)")));
        QCOMPARE(ui::displayName(home + QStringLiteral("/model.onnx")),
            QStringLiteral("model.onnx (~)"));
        const QString deep = QStringLiteral("/data/exports/") + QString(80, u'q')
            + QStringLiteral("/whisper-small/onnx/model.onnx");
        const QString shown = ui::displayName(deep);
        QVERIFY2(shown.startsWith(QStringLiteral("model.onnx (/data"))
                && shown.endsWith(QStringLiteral("whisper-small/onnx)"))
                && shown.contains(QChar(0x2026))
                && shown.size() == QStringLiteral("model.onnx ()").size() + ui::kFolderCharacters,
            qPrintable(shown));
        const QFontMetrics metrics(QApplication::font());
        const int width = metrics.averageCharWidth() * 40;
        const QString entry = ui::displayName(deep, metrics, width);
        QVERIFY2(metrics.horizontalAdvance(entry) <= width
                && entry.endsWith(QStringLiteral("onnx)"))
                && entry.startsWith(QStringLiteral("model.onnx (/")),
            qPrintable(entry));
    }

    void droppedModelOpens()
    {
        QTemporaryDir dir;
        const auto built = uifixtures::writeMixedModel(dir.path(), QStringLiteral("dropped.onnx"));
        QVERIFY(!built.empty());
        ui::MainWindow window;
        QSignalSpy opened(&window, &ui::MainWindow::modelOpened);
        // A file that is not a model is ignored.
        drop(window, {QUrl::fromLocalFile(dir.filePath(QStringLiteral("weights.bin")))});
        QVERIFY(!window.isLoading());
        QCOMPARE(opened.count(), 0);
        drop(window, {QUrl::fromLocalFile(dir.filePath(QStringLiteral("dropped.onnx")))});
        QVERIFY(window.isLoading());
        QVERIFY(opened.wait(60000));
        QCOMPARE(opened.count(), 1);
        QCOMPARE(window.currentPath(), dir.filePath(QStringLiteral("dropped.onnx")));
        QCOMPARE(window.tensorModel()->rowCount(), int(built.size()));
        QVERIFY(m_dialogs.isEmpty());
    }

    void openingKeepsTheCurrentModelUntilTheNewOneIsReady()
    {
        QTemporaryDir dir;
        const auto first = uifixtures::writeMixedModel(dir.path(), QStringLiteral("first.onnx"));
        const auto second
            = uifixtures::writeInlineModel(dir.path(), {10, 20}, QStringLiteral("second.onnx"));
        const auto third
            = uifixtures::writeInlineModel(dir.path(), {10, 20, 30}, QStringLiteral("third.onnx"));
        QVERIFY(!first.empty() && !second.empty() && !third.empty());
        ui::MainWindow window;
        QAbstractItemModelTester tester(
            window.tensorProxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(open(window, dir.filePath(QStringLiteral("first.onnx"))));

        QSignalSpy opened(&window, &ui::MainWindow::modelOpened);
        QVERIFY(window.openFile(dir.filePath(QStringLiteral("second.onnx")), true));
        // The load runs on a worker: meanwhile the window shows the first model and will not
        // save it, since it is about to be replaced.
        QVERIFY(window.isLoading());
        QCOMPARE(window.tensorModel()->rowCount(), int(first.size()));
        QCOMPARE(window.currentPath(), dir.filePath(QStringLiteral("first.onnx")));
        QVERIFY(!window.saveTo(dir.filePath(QStringLiteral("first.onnx"))));
        // A newer open supersedes it: only the third model is ever shown.
        QVERIFY(window.openFile(dir.filePath(QStringLiteral("third.onnx")), true));
        QVERIFY(opened.wait(60000));
        QThreadPool::globalInstance()->waitForDone();
        QCoreApplication::processEvents();
        QCOMPARE(opened.count(), 1);
        QCOMPARE(opened.first().first().toString(), dir.filePath(QStringLiteral("third.onnx")));
        QCOMPARE(window.tensorModel()->rowCount(), int(third.size()));
        QVERIFY(!window.isLoading());
        QVERIFY(m_dialogs.isEmpty());
    }

    void failedOpenKeepsTheCurrentModel()
    {
        QTemporaryDir dir;
        const auto built = uifixtures::writeMixedModel(dir.path());
        QVERIFY(!built.empty());
        QFile garbage(dir.filePath(QStringLiteral("garbage.onnx")));
        QVERIFY(garbage.open(QIODevice::WriteOnly));
        garbage.write(QByteArray(100, '\xff'));
        garbage.close();
        ui::MainWindow window;
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));

        QSignalSpy failed(&window, &ui::MainWindow::openFailed);
        QVERIFY(window.openFile(dir.filePath(QStringLiteral("garbage.onnx")), true));
        QVERIFY(failed.wait(60000));
        QCOMPARE(failed.first().at(0).toString(), dir.filePath(QStringLiteral("garbage.onnx")));
        QVERIFY(!failed.first().at(1).toString().isEmpty());
        QCOMPARE(window.lastError(), failed.first().at(1).toString());
        QCOMPARE(window.currentPath(), dir.filePath(QStringLiteral("model.onnx")));
        QCOMPARE(window.tensorModel()->rowCount(), int(built.size()));
        QVERIFY(m_dialogs.isEmpty()); // quiet
        // Not quiet: a dialog says why.
        QVERIFY(window.openFile(dir.filePath(QStringLiteral("missing.onnx"))));
        QVERIFY(failed.wait(60000));
        QTRY_COMPARE(m_dialogs, QStringList{QStringLiteral("Cannot open model")});
    }

    // Issue 27 item 4: the options a model was saved with are remembered for that model, on
    // disk; another model starts from the core's defaults.
    void openedModelsAreRememberedOnDisk()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        QVERIFY(!uifixtures::writeInlineModel(dir.path(), {10, 5000}, QStringLiteral("other.onnx"))
                     .empty());
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        const QString other = dir.filePath(QStringLiteral("other.onnx"));
        {
            ui::MainWindow window;
            QVERIFY(open(window, path));
            window.repackPanel()->thresholdEdit()->setValue(12345);
            window.repackPanel()->dataFileEdit()->setText(QStringLiteral("mine.bin"));
            window.repackPanel()->checksumBox()->setChecked(true);
            QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
            QVERIFY(window.saveTo(path));
            QVERIFY(finished.wait(60000));
            QCOMPARE(finished.first().first().toBool(), true);
            window.close();
        }
        // Written by the settings thread, not the GUI thread: wait for it, then read the file.
        ui::waitForSettingsWritten();
        const QSettings settings;
        QCOMPARE(settings.value(QStringLiteral("recentFiles")).toStringList().value(0), path);
        QCOMPARE(settings.value(QStringLiteral("modelOptions"))
                     .toMap()
                     .value(path)
                     .toMap()
                     .value(QStringLiteral("repack/threshold"))
                     .toULongLong(),
            12345ull);
        QVERIFY(!settings.contains(QStringLiteral("repack/threshold"))
            || settings.value(QStringLiteral("repack/threshold")).toULongLong() != 12345);
        ui::MainWindow next;
        // Another model: the defaults, not what was typed for model.onnx.
        QVERIFY(open(next, other));
        const repack::SaveOptions defaults;
        ui::RepackPanel* panel = next.repackPanel();
        QCOMPARE(panel->thresholdEdit()->value(), defaults.threshold);
        QCOMPARE(panel->dataFileEdit()->text(), QString());
        QVERIFY(!panel->checksumBox()->isChecked());
        QVERIFY(panel->keepsPlacement());
        // model.onnx again: what it was saved with, its layout kept until asked otherwise.
        QVERIFY(open(next, path));
        QCOMPARE(panel->thresholdEdit()->value(), uint64_t(12345));
        QCOMPARE(panel->dataFileEdit()->text(), QStringLiteral("mine.bin"));
        QVERIFY(panel->checksumBox()->isChecked());
        QVERIFY(panel->keepsPlacement());
        QVERIFY(!next.hasPendingWork());
        QVERIFY2(m_dialogs.isEmpty(), qPrintable(m_dialogs.join(u',')));
    }

    void brokenModelShowsProblems_data()
    {
        QTest::addColumn<QString>("location");
        QTest::addColumn<QString>("code");
        QTest::addRow("escaping with ..")
            << QStringLiteral("../escape.bin") << QStringLiteral("location-escapes");
        QTest::addRow("absolute path")
            << QStringLiteral("/etc/passwd") << QStringLiteral("absolute-location");
        QTest::addRow("missing file")
            << QStringLiteral("gone.bin") << QStringLiteral("missing-file");
    }

    void brokenModelShowsProblems()
    {
        QFETCH(QString, location);
        QFETCH(QString, code);
        QTemporaryDir parent;
        QVERIFY(QDir(parent.path()).mkdir(QStringLiteral("model")));
        const QString dir = parent.filePath(QStringLiteral("model"));
        // The escaping target exists, so only validation keeps the tool from reading it.
        QFile escape(parent.filePath(QStringLiteral("escape.bin")));
        QVERIFY(escape.open(QIODevice::WriteOnly));
        escape.write(QByteArray(64, 'x'));
        escape.close();
        QVERIFY(uifixtures::writeBrokenModel(dir, location.toStdString()));

        ui::MainWindow window;
        QVERIFY(open(window, QDir(dir).filePath(QStringLiteral("broken.onnx"))));
        const ui::ProblemsModel* problems = window.problemsModel();
        QStringList codes;
        for (int r = 0; r < problems->rowCount(); ++r) {
            codes << problems->index(r, ui::ProblemsModel::Code).data().toString();
            QVERIFY(problems->index(r, ui::ProblemsModel::Tensor)
                        .data()
                        .toString()
                        .endsWith(QStringLiteral("/w")));
        }
        QVERIFY2(codes.contains(code), qPrintable(codes.join(u',')));
        const int row = sourceRowOf(window, QStringLiteral("w"));
        QVERIFY(window.tensorModel()->index(row, TensorTableModel::Status).data().toString()
            != QStringLiteral("ok"));
        // The broken reference is not drawn as a block of some file.
        QCOMPARE(window.layoutMap()->blockCenter(row), QPoint(-1, -1));
        QVERIFY(m_dialogs.isEmpty());
    }

    void mapAndTableShareOneSelection()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        ui::MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        ui::LayoutMapView* map = window.layoutMap();
        const int ext = sourceRowOf(window, QStringLiteral("ext_d"));
        const QPoint center = map->blockCenter(ext);
        QVERIFY(center.x() >= 0);
        QCOMPARE(map->tensorAt(center), ext);

        QTest::mouseClick(map->viewport(), Qt::LeftButton, {}, center);
        const QModelIndexList selected = window.tensorView()->selectionModel()->selectedRows();
        QCOMPARE(selected.size(), 1);
        QCOMPARE(selected.first().data(TensorTableModel::TensorIndexRole).toInt(), ext);
        QVERIFY(map->isHighlighted(ext));

        // Selecting in the table highlights the block, through the same selection model.
        const int other = sourceRowOf(window, QStringLiteral("ext_c"));
        const QModelIndex row
            = window.tensorProxy()->mapFromSource(window.tensorModel()->index(other, 0));
        window.tensorView()->selectionModel()->select(
            row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QVERIFY(map->isHighlighted(other));
        QVERIFY(!map->isHighlighted(ext));
        QCOMPARE(window.selectedNames(), QStringLiteral("ext_c"));

        // A block whose row the filter hides still selects its tensor (the filter is cleared).
        window.tensorProxy()->setStorageFilter(ui::TensorFilterProxy::StorageFilter::Inline);
        QTest::mouseClick(map->viewport(), Qt::LeftButton, {}, map->blockCenter(ext));
        QCOMPARE(window.tensorView()->selectionModel()->selectedRows().size(), 1);
        QVERIFY(map->isHighlighted(ext));
    }

    void backgroundSaveRefreshesToTheSavedLayout()
    {
        QTemporaryDir dir;
        const std::vector<uint64_t> sizes{100, 4095, 4096, 20000, 300000};
        const auto built = uifixtures::writeInlineModel(dir.path(), sizes);
        QVERIFY(!built.empty());
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        ui::MainWindow window;
        QAbstractItemModelTester tensorTester(
            window.tensorModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(
            window.tensorProxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        window.tensorView()->sortByColumn(TensorTableModel::Size, Qt::DescendingOrder);
        QVERIFY(open(window, path));
        QCOMPARE(window.snapshot().layouts.size(), size_t(0));

        window.repackPanel()->thresholdEdit()->setValue(4096);
        // The selection outlives the save: the same tensors are only stored elsewhere.
        const int largest = sourceRowOf(window, QStringLiteral("w4"));
        window.tensorView()->selectionModel()->select(
            window.tensorProxy()->mapFromSource(window.tensorModel()->index(largest, 0)),
            QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(path));
        QVERIFY(window.isSaving());
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), true);
        QVERIFY2(m_dialogs.isEmpty(), qPrintable(m_dialogs.join(u',')));
        QCOMPARE(window.selectedNames(), QStringLiteral("w4"));
        QVERIFY(window.layoutMap()->isHighlighted(largest));

        // The storage column shows the new layout: external iff size >= threshold.
        const QString dataFile = QStringLiteral("model.onnx.data");
        for (const auto& tensor : built) {
            const int row = sourceRowOf(window, QString::fromStdString(tensor.name));
            const QString storage
                = window.tensorModel()->index(row, TensorTableModel::Storage).data().toString();
            QCOMPARE(storage == dataFile, tensor.bytes >= 4096);
            // ... and the map draws exactly the external ones.
            QCOMPARE(window.layoutMap()->blockCenter(row).x() >= 0, tensor.bytes >= 4096);
        }
        QCOMPARE(window.snapshot().layouts.size(), size_t(1));

        // What is on disk agrees: reload and compare with how the fixture was built.
        auto reloaded = repack::Model::load(path.toStdString());
        QVERIFY(reloaded.ok());
        const auto& tensors = reloaded.value()->tensors();
        QCOMPARE(tensors.size(), built.size());
        for (size_t i = 0; i < tensors.size(); ++i) {
            QCOMPARE(tensors[i].name, built[i].name);
            QCOMPARE(tensors[i].isExternal(), built[i].bytes >= 4096);
            const int row = sourceRowOf(window, QString::fromStdString(built[i].name));
            if (tensors[i].isExternal()) {
                QCOMPARE(tensors[i].external->location(), dataFile.toStdString());
                QCOMPARE(window.tensorModel()
                             ->index(row, TensorTableModel::Offset, {})
                             .data(TensorTableModel::SortRole)
                             .toULongLong(),
                    tensors[i].external->offset);
            }
            auto bytes = reloaded.value()->read(i);
            QVERIFY(bytes.ok());
            const auto span = bytes.value().bytes();
            QCOMPARE(std::string(reinterpret_cast<const char*>(span.data()), span.size()),
                built[i].content);
        }
        QVERIFY(reloaded.value()->problems().empty());
    }

    // A re-save that would write what is on disk already: Save is disabled and says so, the
    // preview too; other options enable it again, and a layout change within the data file is
    // named as such, not as "no tensor changes storage".
    void saveSaysNothingToChangeWhenTheLayoutIsAsPlanned()
    {
        QTemporaryDir dir;
        const std::vector<uint64_t> sizes{100, 4096, 20000, 300000, 300001};
        QVERIFY(!uifixtures::writeInlineModel(dir.path(), sizes).empty());
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        ui::MainWindow window;
        QVERIFY(open(window, path));
        window.repackPanel()->thresholdEdit()->setValue(4096);
        QTRY_VERIFY(window.saveAction()->isEnabled());
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(path));
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), true);

        QTRY_VERIFY(!window.saveAction()->isEnabled());
        QVERIFY2(window.saveAction()->toolTip().contains(QStringLiteral("Nothing to change")),
            qPrintable(window.saveAction()->toolTip()));
        QVERIFY(window.repackPanel()->previewLabel()->text().contains(
            QStringLiteral("Nothing to change")));

        // Aligning the two largest moves them within the file: Save is back, the preview says so.
        window.repackPanel()->alignThresholdEdit()->setValue(300000);
        QTRY_VERIFY(window.saveAction()->isEnabled());
        const QString preview = window.repackPanel()->previewLabel()->text();
        QVERIFY2(preview.contains(QStringLiteral("move within their data files"))
                && !preview.contains(QStringLiteral("Nothing to change")),
            qPrintable(preview));
    }

    // The Format chooser follows the model opened: a model whose data files are all
    // .safetensors files is saved as such again unless the user picks otherwise, one with raw
    // data files as raw; a model without external data keeps the user's last choice.
    void formatFollowsTheOpenedModel()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeInlineModel(dir.path(), {100, 5000, 300000}).empty());
        const QString inlineModel = dir.filePath(QStringLiteral("model.onnx"));
        ui::MainWindow window;
        QComboBox* format = window.repackPanel()->formatBox();
        const auto choose
            = [format](repack::DataFormat f) { format->setCurrentIndex(format->findData(int(f))); };
        const auto shown = [format] { return repack::DataFormat(format->currentData().toInt()); };
        QVERIFY(open(window, inlineModel));
        window.repackPanel()->thresholdEdit()->setValue(4096);
        for (const auto& [name, f] : {std::pair{"raw.onnx", repack::DataFormat::Raw},
                 std::pair{"st.onnx", repack::DataFormat::Safetensors}}) {
            choose(f);
            QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
            QVERIFY(window.saveTo(dir.filePath(QString::fromLatin1(name))));
            QVERIFY(finished.wait(60000));
            QCOMPARE(finished.first().first().toBool(), true);
        }
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("st.onnx.safetensors"))));

        choose(repack::DataFormat::Raw);
        m_clickButton = QStringLiteral("Discard"); // the format chosen is not saved
        QVERIFY(open(window, dir.filePath(QStringLiteral("st.onnx"))));
        QCOMPARE(shown(), repack::DataFormat::Safetensors);
        QVERIFY(!window.repackPanel()->alignmentBox()->isEnabled());
        // Its layout is kept until the rule is asked for; the rule then writes safetensors.
        QVERIFY(window.repackPanel()->options()->keepPlacement);
        window.repackPanel()->keepBox()->setChecked(false);
        QCOMPARE(window.repackPanel()->options()->format, repack::DataFormat::Safetensors);
        window.repackPanel()->keepBox()->setChecked(true);
        QVERIFY(open(window, dir.filePath(QStringLiteral("raw.onnx"))));
        QCOMPARE(shown(), repack::DataFormat::Raw);
        choose(repack::DataFormat::Safetensors);
        // A model without data files starts from the default format, not the last choice.
        QVERIFY(open(window, inlineModel));
        QCOMPARE(shown(), repack::DataFormat::Raw);
        QCOMPARE(m_dialogs,
            QStringList({QStringLiteral("Save changes?"), QStringLiteral("Save changes?")}));
    }

    void foreignDataFileIsOverwrittenOnlyWithConsent_data()
    {
        QTest::addColumn<bool>("consent");
        QTest::addRow("declined") << false;
        QTest::addRow("accepted") << true;
    }

    void foreignDataFileIsOverwrittenOnlyWithConsent()
    {
        QFETCH(bool, consent);
        QTemporaryDir dir;
        const auto built = uifixtures::writeInlineModel(dir.path(), {100, 8192});
        QVERIFY(!built.empty());
        // Saving as other.onnx would write other.onnx.data, which belongs to no model we know.
        QFile foreign(dir.filePath(QStringLiteral("other.onnx.data")));
        QVERIFY(foreign.open(QIODevice::WriteOnly));
        foreign.write(QByteArray(64, 'f'));
        foreign.close();
        const auto before = uifixtures::folderContents(dir.path());
        ui::MainWindow window;
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        window.repackPanel()->thresholdEdit()->setValue(4096);
        m_answerYes = consent;
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(dir.filePath(QStringLiteral("other.onnx"))));
        QVERIFY(finished.wait(60000));
        // The worker found the file before writing anything and the window asked, saying that
        // no model uses it, with Cancel as the default answer.
        QCOMPARE(m_dialogs, QStringList{QStringLiteral("Replace data file?")});
        QVERIFY2(m_dialogTexts.first().contains(
                     QStringLiteral("other.onnx.data: no model in the folder uses it")),
            qPrintable(m_dialogTexts.first()));
        QCOMPARE(m_cancelIsDefault, QList<bool>{true});
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.first().first().toBool(), consent);
        QVERIFY(!window.isSaving());
        QVERIFY(window.repackPanel()->isEnabled());
        if (!consent) {
            QVERIFY(uifixtures::folderContents(dir.path()) == before);
            return;
        }
        // Saved over it: the window shows the new model, whose big tensor is in that file.
        QCOMPARE(window.currentPath(), dir.filePath(QStringLiteral("other.onnx")));
        const int big = sourceRowOf(window, QStringLiteral("w1"));
        QCOMPARE(window.tensorModel()->index(big, TensorTableModel::Storage).data().toString(),
            QStringLiteral("other.onnx.data"));
        auto saved = repack::Model::load(dir.filePath(QStringLiteral("other.onnx")).toStdString());
        QVERIFY(saved.ok());
        auto bytes = saved.value()->read(1);
        QVERIFY(bytes.ok());
        const auto span = bytes.value().bytes();
        QCOMPARE(
            std::string(reinterpret_cast<const char*>(span.data()), span.size()), built[1].content);
        QCOMPARE(QFileInfo(dir.filePath(QStringLiteral("other.onnx.data"))).size(), qint64(8192));
    }

    // The replace dialog offers a data file of a free name instead: the foreign file keeps its
    // bytes, and the saved model reads the new file (issue 27 item 7).
    void aNewDataFileInsteadOfReplacing()
    {
        QTemporaryDir dir;
        const auto built = uifixtures::writeInlineModel(dir.path(), {100, 8192});
        QVERIFY(!built.empty());
        QFile foreign(dir.filePath(QStringLiteral("other.onnx.data")));
        QVERIFY(foreign.open(QIODevice::WriteOnly));
        foreign.write(QByteArray(64, 'f'));
        foreign.close();
        ui::MainWindow window;
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        window.repackPanel()->thresholdEdit()->setValue(4096);
        m_clickButton = QStringLiteral("Write other.onnx-2.data Instead");
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(dir.filePath(QStringLiteral("other.onnx"))));
        QVERIFY(finished.wait(60000));
        QCOMPARE(m_dialogs, QStringList{QStringLiteral("Replace data file?")});
        QVERIFY2(
            m_dialogButtons.first().contains(m_clickButton), qPrintable(m_dialogButtons.first()));
        QVERIFY2(m_dialogTexts.first().contains(QStringLiteral("verify still passes")),
            qPrintable(m_dialogTexts.first()));
        QCOMPARE(finished.first().first().toBool(), true);
        QCOMPARE(uifixtures::folderContents(dir.path()).value(QStringLiteral("other.onnx.data")),
            QByteArray(64, 'f'));
        const int big = sourceRowOf(window, QStringLiteral("w1"));
        QCOMPARE(window.tensorModel()->index(big, TensorTableModel::Storage).data().toString(),
            QStringLiteral("other.onnx-2.data"));
        // The panel and the options remembered for other.onnx name the file it was saved with,
        // not the one in the way.
        QCOMPARE(window.repackPanel()->dataFileEdit()->text(), QStringLiteral("other.onnx-2.data"));
        QVERIFY(!window.hasPendingWork());
        QVERIFY(window.repackPanel()->keepsPlacement());
    }

    // SPEC 5a, one save at a time per folder: a save that finds another save holding the
    // folder's lock says "another save is running" and offers Wait or Cancel. Cancel leaves
    // every file as it was; Wait keeps waiting (busy, cancellable) and saves once the other
    // save is over, or stops at Cancel, again leaving every file as it was.
    void anotherSaveRunningOffersWaitOrCancel_data()
    {
        QTest::addColumn<bool>("wait");
        QTest::addColumn<bool>("release"); // the other save ends (else the user cancels)
        QTest::addRow("cancel") << false << false;
        QTest::addRow("wait until the other save ends") << true << true;
        QTest::addRow("wait, then cancel the wait") << true << false;
    }

    void anotherSaveRunningOffersWaitOrCancel()
    {
        QFETCH(bool, wait);
        QFETCH(bool, release);
        QTemporaryDir dir;
        const auto built = uifixtures::writeInlineModel(dir.path(), {100, 8192});
        QVERIFY(!built.empty());
        ui::MainWindow window;
        window.show(); // the busy indicator is looked at
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        window.repackPanel()->thresholdEdit()->setValue(4096);
        const auto before = uifixtures::folderContents(dir.path());
        // The other save: this test holds the folder's lock as a save does.
        auto held = repack::FolderLock::acquire({dir.path().toStdString()}, 0);
        QVERIFY(held);
        std::optional<repack::FolderLock> other(std::move(held.value()));
        m_answerYes = wait;
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(dir.filePath(QStringLiteral("model.onnx"))));
        QTRY_VERIFY_WITH_TIMEOUT(!m_dialogs.isEmpty(), 30000);
        QCOMPARE(m_dialogs, QStringList{QStringLiteral("Another save is running")});
        QVERIFY2(m_dialogTexts.first().contains(QStringLiteral("another save is running")),
            qPrintable(m_dialogTexts.first()));
        QVERIFY2(m_dialogTexts.first().contains(QDir(dir.path()).dirName()),
            qPrintable(m_dialogTexts.first()));
        QCOMPARE(m_dialogButtons, QStringList{QStringLiteral("Wait|Cancel")});
        if (!wait) {
            QVERIFY(finished.count() == 1 || finished.wait(30000)); // may end with the dialog
            QCOMPARE(finished.first().first().toBool(), false);
            QVERIFY(!window.isSaving());
            QVERIFY(uifixtures::folderContents(dir.path()) == before);
            return;
        }
        // Waiting: busy, with Cancel, nothing written while the other save holds the folder.
        QTest::qWait(600);
        QVERIFY(window.isSaving());
        QCOMPARE(finished.count(), 0);
        QVERIFY(uifixtures::folderContents(dir.path()) == before);
        QLabel* busy = nullptr;
        for (QLabel* label : window.statusBar()->findChildren<QLabel*>()) {
            if (label->isVisible() && label->text().contains(QStringLiteral("Waiting")))
                busy = label;
        }
        QVERIFY2(busy, "the status bar does not say the save is waiting");
        QPushButton* cancel = nullptr;
        for (QPushButton* button : window.statusBar()->findChildren<QPushButton*>()) {
            if (button->isVisible() && button->text() == QStringLiteral("Cancel"))
                cancel = button;
        }
        QVERIFY2(cancel, "waiting cannot be cancelled");
        if (release) {
            other.reset();
        } else {
            cancel->click();
        }
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.first().first().toBool(), release);
        QCOMPARE(m_dialogs.size(), 1); // no second question, no "Save failed"
        QVERIFY(!window.isSaving());
        if (!release) {
            QVERIFY(uifixtures::folderContents(dir.path()) == before);
            return;
        }
        QCOMPARE(QFileInfo(dir.filePath(QStringLiteral("model.onnx.data"))).size(), qint64(8192));
        QCOMPARE(window.tensorModel()
                     ->index(sourceRowOf(window, QStringLiteral("w1")), TensorTableModel::Storage)
                     .data()
                     .toString(),
            QStringLiteral("model.onnx.data"));
    }

    // SPEC 5a "Siblings": b.onnx reads shared.data too, so replacing it needs consent that
    // names b.onnx; declining writes nothing.
    void siblingReadingTheDataFileIsNamedBeforeItIsReplaced()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeSharedModels(dir.path()).empty());
        const QString path = dir.filePath(QStringLiteral("a.onnx"));
        const auto before = uifixtures::folderContents(dir.path());
        ui::MainWindow window;
        QVERIFY(open(window, path));
        window.repackPanel()->dataFileEdit()->setText(QStringLiteral("shared.data"));
        window.repackPanel()->thresholdEdit()->setValue(1024);
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(path));
        QVERIFY(finished.wait(60000));
        QCOMPARE(m_dialogs, QStringList{QStringLiteral("Replace data file?")});
        QVERIFY2(m_dialogTexts.first().contains(QStringLiteral(
                     "b.onnx reads shared.data: after this save it would read wrong weights")),
            qPrintable(m_dialogTexts.first()));
        QCOMPARE(m_cancelIsDefault, QList<bool>{true});
        QCOMPARE(finished.first().first().toBool(), false);
        const auto after = uifixtures::folderContents(dir.path());
        QCOMPARE(after.keys(), before.keys());
        QVERIFY(after == before);
        QCOMPARE(window.currentPath(), path);
        QVERIFY(!window.isSaving());
        QVERIFY(window.repackPanel()->isEnabled());
    }

    // SPEC 5a "Names that alias": a data file named like the model itself is refused whatever
    // the consent, as a failed save that wrote nothing.
    void aliasingDataNameFailsWithoutWriting()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeInlineModel(dir.path(), {100, 8192}).empty());
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        const auto before = uifixtures::folderContents(dir.path());
        ui::MainWindow window;
        QVERIFY(open(window, path));
        window.repackPanel()->dataFileEdit()->setText(QStringLiteral("model.onnx"));
        m_answerYes = true; // consent would not help
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(path));
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), false);
        QCOMPARE(m_dialogs, QStringList{QStringLiteral("Save failed")});
        QVERIFY(m_dialogTexts.first().contains(QStringLiteral("not saved")));
        QVERIFY(uifixtures::folderContents(dir.path()) == before);
    }

    // The data file is replaced from outside (same size, other bytes, a new
    // inode) and the user declines to reload. Save As must not copy the new file's bytes at
    // the old offsets: it fails, saying the file changed, and writes nothing.
    void saveAsRefusesADataFileReplacedSinceOpening()
    {
        QTemporaryDir dir;
        QTemporaryDir out;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        ui::MainWindow window;
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));

        const QString weights = dir.filePath(QStringLiteral("weights.bin"));
        QFile original(weights);
        QVERIFY(original.open(QIODevice::ReadOnly));
        QByteArray bytes = original.readAll();
        original.close();
        for (char& byte : bytes)
            byte = char(~byte);
        const QString replacement = dir.filePath(QStringLiteral("replacement"));
        QFile file(replacement);
        QVERIFY(file.open(QIODevice::WriteOnly));
        QCOMPARE(file.write(bytes), qint64(bytes.size()));
        file.close();
        std::error_code ec;
        std::filesystem::rename(replacement.toStdString(), weights.toStdString(), ec);
        QVERIFY(!ec);
        const auto sourceBefore = uifixtures::folderContents(dir.path());
        // The window offers to reload and the dialog closer answers No. (Should the watcher
        // stay silent, the save below is the same as one made before it noticed.)
        (void)QTest::qWaitFor(
            [this] { return m_dialogs.contains(QStringLiteral("Model changed on disk")); }, 3000);
        m_dialogs.clear();
        m_dialogTexts.clear();

        window.repackPanel()->thresholdEdit()->setValue(1);
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(out.filePath(QStringLiteral("model.onnx"))));
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), false);
        QCOMPARE(m_dialogs, QStringList{QStringLiteral("Save failed")});
        const QRegularExpression why(QStringLiteral("\\b(changed|invalidated|replaced)\\b"),
            QRegularExpression::CaseInsensitiveOption);
        const QString error = m_dialogTexts.first().section(u'\n', 1);
        QVERIFY2(why.match(error).hasMatch(), qPrintable(m_dialogTexts.first()));
        QVERIFY2(QDir(out.path())
                     .entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot)
                     .isEmpty(),
            qPrintable(QDir(out.path()).entryList(QDir::AllEntries | QDir::Hidden).join(u',')));
        QVERIFY(uifixtures::folderContents(dir.path()) == sourceBefore);
    }

    // SPEC 5a "Housekeeping": a temporary left by a save that is no longer running shows in the
    // problems panel as a warning naming the file.
    void leftoverTemporaryShowsAsAProblem()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        const QString leftover = QStringLiteral("weights.bin.repack-tmp-0123456789ab");
        QFile file(dir.filePath(leftover));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray(5000, 'x'));
        file.close();
        ui::MainWindow window;
        QAbstractItemModelTester tester(
            window.problemsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        const ui::ProblemsModel* problems = window.problemsModel();
        QStringList codes;
        int found = -1;
        for (int r = 0; r < problems->rowCount(); ++r) {
            const QString code = problems->index(r, ui::ProblemsModel::Code).data().toString();
            codes << code;
            if (code == QStringLiteral("leftover-temporary"))
                found = r;
        }
        QVERIFY2(found >= 0, qPrintable(codes.join(u',')));
        QCOMPARE(problems->index(found, 0).data(ui::ProblemsModel::IsErrorRole).toBool(), false);
        QVERIFY(problems->index(found, ui::ProblemsModel::Message)
                    .data()
                    .toString()
                    .contains(leftover));
        QVERIFY(m_dialogs.isEmpty());
    }

    // SPEC 5a "After the commit point": the final rename fails once the new model is committed.
    // The window says "saved with a warning", not "not saved", and shows the saved model.
    void failureAfterTheCommitPointIsSavedWithAWarning()
    {
        QTemporaryDir dir;
        const auto built = uifixtures::writeInlineModel(dir.path(), {100, 8192});
        QVERIFY(!built.empty());
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        ui::MainWindow window;
        QVERIFY(open(window, path));
        window.repackPanel()->thresholdEdit()->setValue(4096);
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        // The core reads the fault hook on every call.
        qputenv("ONNX_REPACK_FAIL_AT", "rename-model-final");
        const auto unset = qScopeGuard([] { qunsetenv("ONNX_REPACK_FAIL_AT"); });
        QVERIFY(window.saveTo(path));
        QVERIFY(finished.wait(60000));
        qunsetenv("ONNX_REPACK_FAIL_AT");
        QCOMPARE(finished.first().first().toBool(), true);
        QCOMPARE(m_dialogs, QStringList{QStringLiteral("Saved with a warning")});
        QVERIFY2(!m_dialogTexts.first().contains(QStringLiteral("not saved")),
            qPrintable(m_dialogTexts.first()));
        QVERIFY(!m_dialogTexts.first().contains(QStringLiteral("unchanged")));
        // The window shows the new layout, and the model on disk is the new one.
        const int big = sourceRowOf(window, QStringLiteral("w1"));
        QVERIFY(window.tensorModel()->index(big, TensorTableModel::Storage).data().toString()
            != QStringLiteral("inline"));
        auto saved = repack::Model::load(path.toStdString());
        QVERIFY_OK(saved);
        QVERIFY(saved.value()->tensors()[1].isExternal());
        auto bytes = saved.value()->read(1);
        QVERIFY(bytes.ok());
        const auto span = bytes.value().bytes();
        QCOMPARE(
            std::string(reinterpret_cast<const char*>(span.data()), span.size()), built[1].content);
    }

    // SPEC 5a "Housekeeping": an in-place save that stops using a data file says so; with the
    // panel's option it removes the file, else the problems panel now lists it as unused.
    void inPlaceSaveNamesTheDataFileItNoLongerUses_data()
    {
        QTest::addColumn<bool>("remove");
        QTest::addRow("kept") << false;
        QTest::addRow("removed") << true;
    }

    void inPlaceSaveNamesTheDataFileItNoLongerUses()
    {
        QFETCH(bool, remove);
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        ui::MainWindow window;
        QVERIFY(open(window, path));
        // The rule's default data file is model.onnx.data: weights.bin is no longer used.
        window.repackPanel()->keepBox()->setChecked(false);
        window.repackPanel()->removeUnusedBox()->setChecked(remove);
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(path));
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), true);
        QVERIFY2(m_dialogs.isEmpty(), qPrintable(m_dialogs.join(u',')));
        const QString status = window.statusBar()->currentMessage();
        QVERIFY2(status.contains(remove ? QStringLiteral("No longer used, removed: weights.bin")
                                        : QStringLiteral("No longer used by this model, kept: "
                                                         "weights.bin")),
            qPrintable(status));
        QCOMPARE(QFileInfo::exists(dir.filePath(QStringLiteral("weights.bin"))), !remove);
        // The snapshot taken after the save lists the folder's problems too.
        QStringList codes;
        for (int r = 0; r < window.problemsModel()->rowCount(); ++r)
            codes << window.problemsModel()->index(r, ui::ProblemsModel::Code).data().toString();
        QCOMPARE(codes.contains(QStringLiteral("unused-data-file")), !remove);
    }

    void cancelledSaveLeavesOriginalsIntact()
    {
        QTemporaryDir dir;
        // Large enough that the save is still copying when the cancel arrives.
        const auto built = uifixtures::writeInlineModel(dir.path(), {64u << 20, 64u << 20, 2048});
        QVERIFY(!built.empty());
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        const auto before = uifixtures::folderContents(dir.path());
        ui::MainWindow window;
        QVERIFY(open(window, path));
        // The rule moves both 64 MiB tensors out: a save with bytes to copy (kept, the model
        // would have nothing to change and finish at once).
        window.repackPanel()->keepBox()->setChecked(false);
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(path));
        window.cancelSave();
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.first().first().toBool(), false);
        QVERIFY2(
            m_dialogs.isEmpty(), qPrintable(m_dialogs.join(u','))); // cancelling is not an error
        const auto after = uifixtures::folderContents(dir.path());
        QCOMPARE(after.keys(), before.keys()); // no temporary files left behind
        QVERIFY(after == before);
        // The window still shows the unchanged model and can save again.
        for (const auto& row : window.snapshot().tensors)
            QVERIFY(!row.external);
        QVERIFY(window.repackPanel()->isEnabled());
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
