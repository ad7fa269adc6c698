// The folder window (File > Open Folder…, a dropped folder): the graphs, data files, shared
// weights and problems of a folder of graphs; the bytes a shared data file saves, said before
// saving; the save as one unit in the background, and the folder shown as it is afterwards.
#include "tests/support/folder_fixtures.h"
#include "tests/support/tensor_builder.h"
#include "ui/folder_map.h"
#include "ui/folder_window.h"
#include "ui/main_window.h"

#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

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
        QSignalSpy saved(&window, &ui::FolderWindow::saved);
        QTest::mouseClick(window.saveButton(), Qt::LeftButton);
        QVERIFY(saved.wait(30000));
        QVERIFY2(saved.takeFirst().at(0).toBool(), qPrintable(window.lastError()));
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
        QTRY_VERIFY_WITH_TIMEOUT(window.savingsLabel()->text() == "nothing to change", 20000);
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
};

QTEST_MAIN(TestFolderWindow)
#include "tst_folder_window.moc"
