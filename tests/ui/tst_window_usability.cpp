// The main window as a new user meets it: at 1024x700 the storage columns and the whole summary
// strip are on screen, names are cut at their end, every column explains itself, Save says why
// it cannot save instead of failing, a failed open does not claim "no external data", the table
// and splitter come back as they were left, and `--help` names the program.
#include "ui_fixtures.h"

#include "tests/support/save_fixtures.h"
#include "ui/models/model_snapshot.h"
#include "ui/models/tensor_table_model.h"
#include "ui/save/save_flow.h"
#include "ui/save/save_preview.h"
#include "ui/util/settings_store.h"
#include "ui/util/window_fit.h"
#include "ui/views/layout_map_view.h"
#include "ui/views/repack_panel.h"
#include "ui/views/size_edit.h"
#include "ui/views/summary_strip.h"
#include "ui/windows/main_window.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSplitter>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

using ui::TensorTableModel;

class TestWindowUsability : public QObject {
    Q_OBJECT

private:
    static bool open(ui::MainWindow& window, const QString& path)
    {
        QSignalSpy opened(&window, &ui::MainWindow::modelOpened);
        return window.openFile(path, true) && opened.wait(60000);
    }

    // The panel's button for the action called `text` ("&Save", "Save &As…").
    static QToolButton* panelButton(ui::MainWindow& window, const QString& text)
    {
        for (QToolButton* button : window.repackPanel()->findChildren<QToolButton*>()) {
            if (button->defaultAction() && button->defaultAction()->text() == text)
                return button;
        }
        return nullptr;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("onnx-repack-tests"));
        QApplication::setApplicationName(QStringLiteral("tst_window_usability"));
    }

    void init()
    {
        // Every window starts from defaults, not from what the last one left.
        QVariantMap defaults{{QStringLiteral("modelOptions"), QVariantMap()}};
        for (const QString& key : ui::settingsIn(QStringLiteral("window")).keys())
            defaults.insert(key, QByteArray());
        ui::writeSettings(defaults);
    }

    void storageColumnsAndSummaryFitAt1024x700()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        ui::MainWindow window;
        window.resize(1024, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        QTest::qWait(100); // the layouts settle on the new texts
        // The window's minimum does not push it past the screen it was sized for.
        QCOMPARE(window.size(), QSize(1024, 700));

        QTableView* table = window.tensorView();
        QHeaderView* header = table->horizontalHeader();
        const int viewport = table->viewport()->width();
        for (int column : {TensorTableModel::Name, TensorTableModel::Size,
                 TensorTableModel::Storage, TensorTableModel::Planned, TensorTableModel::Offset,
                 TensorTableModel::Length, TensorTableModel::Status}) {
            const QString what
                = QStringLiteral("%1: at %2, %3 wide, viewport %4")
                      .arg(window.tensorModel()->headerData(column, Qt::Horizontal).toString())
                      .arg(header->sectionViewportPosition(column))
                      .arg(header->sectionSize(column))
                      .arg(viewport);
            QVERIFY2(!header->isSectionHidden(column), qPrintable(what));
            QVERIFY2(header->sectionViewportPosition(column) >= 0, qPrintable(what));
            QVERIFY2(
                header->sectionViewportPosition(column) + header->sectionSize(column) <= viewport,
                qPrintable(what));
        }
        // The name column keeps room for a readable name.
        QVERIFY2(header->sectionSize(TensorTableModel::Name)
                >= 20 * table->fontMetrics().averageCharWidth(),
            qPrintable(QString::number(header->sectionSize(TensorTableModel::Name))));

        ui::SummaryStrip* strip = window.summary();
        QVERIFY2(strip->sizeHint().width() <= strip->width(),
            qPrintable(QStringLiteral("hint %1, width %2")
                           .arg(strip->sizeHint().width())
                           .arg(strip->width())));
        // Every field (caption and value) is inside the strip, none cut at its edge.
        const auto labels = strip->findChildren<QLabel*>();
        QCOMPARE(labels.size(), 12);
        for (QLabel* label : labels) {
            const QRect inStrip(label->mapTo(strip, QPoint(0, 0)), label->size());
            QVERIFY2(strip->rect().contains(inStrip),
                qPrintable(QStringLiteral("%1 at %2,%3 %4x%5 in %6x%7")
                               .arg(label->text())
                               .arg(inStrip.x())
                               .arg(inStrip.y())
                               .arg(inStrip.width())
                               .arg(inStrip.height())
                               .arg(strip->width())
                               .arg(strip->height())));
            QVERIFY2(label->width() >= label->sizeHint().width(), qPrintable(label->text()));
        }
    }

    void namesAreElidedOnTheRight()
    {
        ui::MainWindow window;
        QCOMPARE(window.tensorView()->textElideMode(), Qt::ElideRight);
    }

    void everyColumnExplainsItself()
    {
        TensorTableModel model;
        for (int c = 0; c < TensorTableModel::ColumnCount; ++c) {
            const QString tip = model.headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString();
            QVERIFY2(tip.size() > 20, qPrintable(model.headerData(c, Qt::Horizontal).toString()));
        }
        // The units of the numbers.
        QVERIFY(model.headerData(TensorTableModel::Size, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("KiB")));
        for (int c : {TensorTableModel::Offset, TensorTableModel::Length})
            QVERIFY(model.headerData(c, Qt::Horizontal, Qt::ToolTipRole)
                        .toString()
                        .contains(QStringLiteral("Byte"), Qt::CaseInsensitive));
    }

    void typedStorageIsExplained()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        ui::MainWindow window;
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        TensorTableModel* model = window.tensorModel();
        int typed = 0;
        for (int row = 0; row < model->rowCount(); ++row) {
            const QModelIndex storage = model->index(row, TensorTableModel::Storage);
            const QString tip = storage.data(Qt::ToolTipRole).toString();
            if (storage.data().toString() == QStringLiteral("inline (typed)")) {
                ++typed;
                QVERIFY2(tip.contains(QStringLiteral("float_data"))
                        && tip.contains(QStringLiteral("raw_data")),
                    qPrintable(tip));
            } else {
                QVERIFY2(!tip.contains(QStringLiteral("float_data")), qPrintable(tip));
            }
        }
        QCOMPARE(typed, 1); // typed_b
    }

    void saveIsDisabledWithTheReasonWhileThePlanFails_data()
    {
        QTest::addColumn<bool>("sparse");
        QTest::addColumn<QString>("reason");
        QTest::addRow("data file escaping the folder") << false << QStringLiteral("..");
        QTest::addRow("inline past 2 GiB") << true << QStringLiteral("2 GiB");
    }

    void saveIsDisabledWithTheReasonWhileThePlanFails()
    {
        QFETCH(bool, sparse);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        QString path;
        if (sparse) {
            // Three 1 GiB tensors in a sparse data file: nothing that large is written.
            path = fixtures::writeSparseModel(
                dir.path(), QStringLiteral("big.onnx"), 3, uint64_t(1) << 30, "big.data");
        } else {
            QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
            path = dir.filePath(QStringLiteral("model.onnx"));
        }
        QVERIFY(!path.isEmpty());
        ui::MainWindow window;
        window.show();
        QVERIFY(open(window, path));
        QToolButton* save = panelButton(window, QStringLiteral("&Save"));
        QToolButton* saveAs = panelButton(window, QStringLiteral("Save &As…"));
        QVERIFY(save && saveAs);
        QTRY_VERIFY(!window.isPlanning());
        QVERIFY(saveAs->isEnabled());
        QVERIFY(!save->toolTip().contains(QStringLiteral("Cannot save")));

        ui::RepackPanel* panel = window.repackPanel();
        if (sparse)
            panel->thresholdEdit()->setValue(uint64_t(4) << 30); // everything inline
        else
            panel->dataFileEdit()->setText(QStringLiteral("../outside.data"));
        QTRY_VERIFY(!saveAs->isEnabled());
        QVERIFY(!save->isEnabled());
        QVERIFY2(save->toolTip().startsWith(QStringLiteral("Cannot save"))
                && save->toolTip().contains(reason),
            qPrintable(save->toolTip()));
        QCOMPARE(saveAs->toolTip(), save->toolTip());
        QCOMPARE(panel->previewLabel()->text(), save->toolTip());
        // Save does nothing while blocked (nothing starts, no file appears).
        const auto before = uifixtures::folderContents(dir.path()).keys();
        QVERIFY(!save->defaultAction()->isEnabled());

        if (sparse)
            panel->thresholdEdit()->setValue(1024);
        else
            panel->dataFileEdit()->setText(QStringLiteral("inside.data"));
        QTRY_VERIFY(save->isEnabled());
        QVERIFY(saveAs->isEnabled());
        QVERIFY(!save->toolTip().contains(QStringLiteral("Cannot save")));
        QVERIFY(panel->saveBlocker().isEmpty());
        QCOMPARE(uifixtures::folderContents(dir.path()).keys(), before);
    }

    void failedOpenDoesNotClaimNoExternalData()
    {
        QTemporaryDir dir;
        ui::MainWindow window;
        ui::LayoutMapView* map = window.layoutMap();
        QCOMPARE(map->placeholderText(), QStringLiteral("No model"));

        QSignalSpy failed(&window, &ui::MainWindow::openFailed);
        QVERIFY(window.openFile(dir.filePath(QStringLiteral("missing.onnx")), true));
        QVERIFY(failed.wait(60000));
        const QString error = failed.first().at(1).toString();
        QVERIFY(!error.isEmpty());
        QVERIFY2(!map->placeholderText().contains(QStringLiteral("external"), Qt::CaseInsensitive),
            qPrintable(map->placeholderText()));
        QVERIFY2(map->placeholderText().contains(error), qPrintable(map->placeholderText()));

        // A model that does keep every tensor inline says so; a failed open after it keeps it.
        QVERIFY(!uifixtures::writeInlineModel(dir.path(), {16, 32}).empty());
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        QVERIFY(map->placeholderText().startsWith(QStringLiteral("No external data")));
        QVERIFY(window.openFile(dir.filePath(QStringLiteral("missing.onnx")), true));
        QVERIFY(failed.wait(60000));
        QVERIFY(map->placeholderText().startsWith(QStringLiteral("No external data")));
    }

    void tableAndSplitterAreRememberedAcrossRuns()
    {
        QList<int> sizes;
        int offsetWidth = 0;
        {
            ui::MainWindow window;
            window.resize(1024, 700);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            auto* splitter = qobject_cast<QSplitter*>(window.tensorView()->parentWidget());
            QVERIFY(splitter);
            const int total = splitter->sizes().value(0) + splitter->sizes().value(1);
            splitter->setSizes({total - 200, 200});
            sizes = splitter->sizes();
            QHeaderView* header = window.tensorView()->horizontalHeader();
            header->moveSection(header->visualIndex(TensorTableModel::Scope), 1);
            header->resizeSection(TensorTableModel::Offset, 131);
            offsetWidth = header->sectionSize(TensorTableModel::Offset);
            window.close();
        }
        ui::MainWindow next;
        next.resize(1024, 700);
        next.show();
        QVERIFY(QTest::qWaitForWindowExposed(&next));
        auto* splitter = qobject_cast<QSplitter*>(next.tensorView()->parentWidget());
        QVERIFY(splitter);
        QCOMPARE(splitter->sizes(), sizes);
        QHeaderView* header = next.tensorView()->horizontalHeader();
        QCOMPARE(header->visualIndex(TensorTableModel::Scope), 1);
        QCOMPARE(header->sectionSize(TensorTableModel::Offset), offsetWidth);
    }

    // Issue 27 item 5: a size saved on a larger screen never reopens the window past this one,
    // and a long reason in the Before / after tab wraps instead of widening the window.
    void theWindowFitsTheScreen()
    {
        const QRect available = QGuiApplication::primaryScreen()->availableGeometry();
        {
            ui::MainWindow wide;
            wide.resize(available.width() + 600, available.height() + 300);
            ui::writeSettings(
                {{ui::screenKey(QStringLiteral("window/geometry"), &wide), wide.saveGeometry()}});
        }
        ui::MainWindow window;
        QVERIFY2(window.width() <= available.width() && window.height() <= available.height(),
            qPrintable(QStringLiteral("%1x%2 on %3x%4")
                           .arg(window.width())
                           .arg(window.height())
                           .arg(available.width())
                           .arg(available.height())));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* dock = qobject_cast<QDockWidget*>(window.beforeAfter()->parentWidget());
        QVERIFY(dock);
        dock->show();
        const QString reason = QStringLiteral("Cannot save: ")
            + QStringLiteral("/models/a-folder-with-a-long-name/").repeated(12)
            + QStringLiteral("weights.bin is shorter than the model says");
        window.beforeAfter()->clear(reason);
        QVERIFY2(window.minimumSizeHint().width() <= available.width(),
            qPrintable(QString::number(window.minimumSizeHint().width())));
        QVERIFY(window.width() <= available.width());
    }

    // Issue 27 item 8: the Before / after tab, raised over the Problems list (110 px, a few
    // rows), grows to show its two bars and the changes: a third of the window, at least 220 px.
    void beforeAfterOpensTallEnoughToRead()
    {
        ui::MainWindow window;
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* dock = qobject_cast<QDockWidget*>(window.beforeAfter()->parentWidget());
        QVERIFY(dock);
        auto* problems = window.findChild<QDockWidget*>(QStringLiteral("problemsDock"));
        QVERIFY(problems);
        QTRY_VERIFY(problems->height() < 200); // the list starts short
        dock->raise();
        QTRY_VERIFY2(
            dock->height() >= 220, qPrintable(QStringLiteral("%1 px tall").arg(dock->height())));
        QVERIFY(dock->height() <= window.height() / 2);
    }

    // Issue 27 item 8: at 1024x700 the Preview showed three lines over an empty Placement pane.
    // The pane takes what its few destinations need; the Preview gets the rest.
    void previewGetsTheRoomPlacementDoesNotNeed()
    {
        ui::MainWindow window;
        window.resize(1024, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, QFINDTESTDATA("../../resources/sample/sample.onnx")));
        auto* placement = window.findChild<QDockWidget*>(QStringLiteral("placementDock"));
        QVERIFY(placement);
        auto* preview = window.repackPanel()->findChild<QScrollArea*>();
        QVERIFY(preview);
        const int line = preview->fontMetrics().lineSpacing();
        QTRY_VERIFY2(preview->height() >= 7 * line,
            qPrintable(QStringLiteral("preview %1 px (%2 lines), placement %3 px")
                           .arg(preview->height())
                           .arg(preview->height() / line)
                           .arg(placement->height())));
        QVERIFY(placement->height() >= 5 * line); // its three destinations still show
    }

    // Issue 27 item 6: with every byte written, a save still syncs and renames (seconds on a
    // large model); the progress says so instead of "Writing <the last tensor>".
    void progressNamesTheFinishingSteps()
    {
        QCOMPARE(ui::saveProgressText(100, 200, QStringLiteral("layer12")),
            QStringLiteral("Writing layer12"));
        const QString finishing = ui::saveProgressText(200, 200, QStringLiteral("layer12"));
        QVERIFY2(!finishing.contains(QStringLiteral("layer12"))
                && finishing.contains(QStringLiteral("syncing"))
                && finishing.contains(QStringLiteral("renaming")),
            qPrintable(finishing));
        QVERIFY(ui::saveProgressText(0, 0, QString()).isEmpty());
    }

    // Issue 27 item 8: a data file cut short shows the tensors past its end as missing (the
    // bar runs on to where they end), instead of leaving them out.
    void theMapShowsTensorsPastTheEndAsMissing()
    {
        QTemporaryDir dir;
        // t0 (100 B) inline; t1 (2000 B) and t2 (3000 B) in m.onnx.data, written t2 then t1,
        // each after 7 junk bytes: t1 ends the file.
        const QString path = fixtures::writeUint8Model(
            dir.path(), QStringLiteral("m.onnx"), {100, 2000, 3000}, 1024, "m.onnx.data");
        QFile data(dir.filePath(QStringLiteral("m.onnx.data")));
        const qint64 full = data.size();
        QVERIFY(data.resize(full - 1500)); // t1's last 1500 bytes gone
        auto model = repack::Model::load(path.toStdString());
        QVERIFY(model.ok());
        const ui::ModelSnapshot snapshot = ui::takeSnapshot(**model);
        ui::LayoutMapView map;
        map.setSnapshot(snapshot);
        QCOMPARE(map.missingBytes(0), uint64_t(1500));
        QVERIFY(map.toolTipAtByte(0, uint64_t(full - 100)).contains(QStringLiteral("Missing")));
        QVERIFY(map.toolTipAtByte(0, uint64_t(full - 100)).contains(QStringLiteral("t1")));
    }

    void helpNamesTheProgram()
    {
        QProcess gui;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        // --help must not need a display.
        env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        gui.setProcessEnvironment(env);
        gui.start(QStringLiteral(REPACK_GUI), {QStringLiteral("--help")});
        QVERIFY(gui.waitForFinished(30000));
        QCOMPARE(gui.exitStatus(), QProcess::NormalExit);
        QCOMPARE(gui.exitCode(), 0);
        const QString out = QString::fromLocal8Bit(gui.readAllStandardOutput());
        const QString usage = out.section(u'\n', 0, 0);
        QVERIFY2(usage.contains(QRegularExpression(
                     QStringLiteral("^Usage: \\S*onnx-repack-gui \\[options\\]"))),
            qPrintable(out));
        QVERIFY(out.contains(QStringLiteral("--screenshot-size")));
        // A folder is an argument too (issue 36: it opens the folder window).
        QVERIFY2(usage.contains(QStringLiteral("[MODEL|FOLDER...]")), qPrintable(out));
    }
};

QTEST_MAIN(TestWindowUsability)
#include "tst_window_usability.moc"
