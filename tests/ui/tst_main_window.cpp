// The main window on generated models: models open on a worker while the window keeps the
// current one, dropping a file opens it, a broken model shows its problems, a background save
// refreshes table and map to what is then on disk, a save that would overwrite a foreign data
// file asks first, and a cancelled save leaves the original files byte-identical.
#include "ui_fixtures.h"

#include "core/model.h"
#include "ui/layout_map_view.h"
#include "ui/main_window.h"
#include "ui/problems_model.h"
#include "ui/repack_panel.h"
#include "ui/settings_store.h"
#include "ui/size_edit.h"
#include "ui/tensor_filter_proxy.h"
#include "ui/tensor_table_model.h"

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QUrl>
#include <QtTest>

using ui::TensorTableModel;

class TestMainWindow : public QObject {
    Q_OBJECT

private:
    // Closes any dialog that pops up (a test must never hang on one) and remembers its title;
    // with m_answerYes, a question is answered Yes instead.
    QTimer m_dialogCloser;
    QStringList m_dialogs;
    bool m_answerYes = false;

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
                if (m_answerYes && box && box->button(QMessageBox::Yes))
                    box->button(QMessageBox::Yes)->click();
                else
                    modal->close();
            }
        });
        m_dialogCloser.start();
    }

    void init()
    {
        m_dialogs.clear();
        m_answerYes = false;
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

    void openedModelsAreRememberedOnDisk()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        {
            ui::MainWindow window;
            QVERIFY(open(window, path));
            window.repackPanel()->thresholdEdit()->setValue(12345);
            window.close();
        }
        // Written by the settings thread, not the GUI thread: wait for it, then read the file.
        ui::waitForSettingsWritten();
        const QSettings settings;
        QCOMPARE(settings.value(QStringLiteral("recentFiles")).toStringList().value(0), path);
        QCOMPARE(settings.value(QStringLiteral("repack/threshold")).toULongLong(), 12345ull);
        // A new window starts from them.
        ui::MainWindow next;
        QCOMPARE(next.repackPanel()->options().threshold, uint64_t(12345));
        next.repackPanel()->thresholdEdit()->setValue(1024);
        next.close();
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
                QCOMPARE(tensors[i].external.location, dataFile.toStdString());
                QCOMPARE(window.tensorModel()
                             ->index(row, TensorTableModel::Offset, {})
                             .data(TensorTableModel::SortRole)
                             .toULongLong(),
                    tensors[i].external.offset);
            }
            auto bytes = reloaded.value()->read(i);
            QVERIFY(bytes.ok());
            const auto span = bytes.value().bytes();
            QCOMPARE(std::string(reinterpret_cast<const char*>(span.data()), span.size()),
                built[i].content);
        }
        QVERIFY(reloaded.value()->problems().empty());
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
        // The worker found the file before writing anything and the window asked.
        QCOMPARE(m_dialogs, QStringList{QStringLiteral("Overwrite data file?")});
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
        window.repackPanel()->thresholdEdit()->setValue(1024);
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
