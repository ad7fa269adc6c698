// The main window on generated models: dropping a file opens it, a broken model shows its
// problems, a background save refreshes table and map to what is then on disk, and a
// cancelled save leaves the original files byte-identical.
#include "ui_fixtures.h"

#include "core/model.h"
#include "ui/layout_map_view.h"
#include "ui/main_window.h"
#include "ui/problems_model.h"
#include "ui/repack_panel.h"
#include "ui/size_edit.h"
#include "ui/tensor_filter_proxy.h"
#include "ui/tensor_table_model.h"

#include <QApplication>
#include <QMimeData>
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
    // Closes any dialog that pops up (a test must never hang on one) and remembers its text.
    QTimer m_dialogCloser;
    QStringList m_dialogs;

    static int sourceRowOf(const ui::MainWindow& window, const QString& name)
    {
        const auto& rows = window.snapshot().tensors;
        for (int i = 0; i < rows.size(); ++i) {
            if (rows[i].name == name)
                return i;
        }
        return -1;
    }

    static void drop(ui::MainWindow& window, const QList<QUrl>& urls)
    {
        QMimeData mime;
        mime.setUrls(urls);
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &enter);
        QDropEvent dropEvent(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
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
                modal->close();
            }
        });
        m_dialogCloser.start();
    }

    void init() { m_dialogs.clear(); }

    void droppedModelOpens()
    {
        QTemporaryDir dir;
        const auto built = uifixtures::writeMixedModel(dir.path(), QStringLiteral("dropped.onnx"));
        QVERIFY(!built.empty());
        ui::MainWindow window;
        QSignalSpy opened(&window, &ui::MainWindow::modelOpened);
        // A file that is not a model is ignored.
        drop(window, {QUrl::fromLocalFile(dir.filePath(QStringLiteral("weights.bin")))});
        QCOMPARE(opened.count(), 0);
        drop(window, {QUrl::fromLocalFile(dir.filePath(QStringLiteral("dropped.onnx")))});
        QCOMPARE(opened.count(), 1);
        QCOMPARE(window.currentPath(), dir.filePath(QStringLiteral("dropped.onnx")));
        QCOMPARE(window.tensorModel()->rowCount(), int(built.size()));
        QVERIFY(m_dialogs.isEmpty());
    }

    void brokenModelShowsProblems_data()
    {
        QTest::addColumn<QString>("location");
        QTest::addColumn<QString>("code");
        QTest::addRow("escaping with ..") << QStringLiteral("../escape.bin") << QStringLiteral("location-escapes");
        QTest::addRow("absolute path") << QStringLiteral("/etc/passwd") << QStringLiteral("absolute-location");
        QTest::addRow("missing file") << QStringLiteral("gone.bin") << QStringLiteral("missing-file");
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
        QVERIFY(window.openFile(QDir(dir).filePath(QStringLiteral("broken.onnx")), true));
        const ui::ProblemsModel* problems = window.problemsModel();
        QStringList codes;
        for (int r = 0; r < problems->rowCount(); ++r) {
            codes << problems->index(r, ui::ProblemsModel::Code).data().toString();
            QVERIFY(problems->index(r, ui::ProblemsModel::Tensor).data().toString().endsWith(QStringLiteral("/w")));
        }
        QVERIFY2(codes.contains(code), qPrintable(codes.join(u',')));
        const int row = sourceRowOf(window, QStringLiteral("w"));
        QVERIFY(window.tensorModel()->index(row, TensorTableModel::Status).data().toString() != QStringLiteral("ok"));
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
        QVERIFY(window.openFile(dir.filePath(QStringLiteral("model.onnx")), true));
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
        const QModelIndex row = window.tensorProxy()->mapFromSource(window.tensorModel()->index(other, 0));
        window.tensorView()->selectionModel()->select(row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
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
        QVERIFY(window.openFile(path, true));
        QCOMPARE(window.snapshot().layouts.size(), size_t(0));

        window.repackPanel()->thresholdEdit()->setValue(4096);
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(path));
        QVERIFY(window.isSaving());
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), true);
        QVERIFY2(m_dialogs.isEmpty(), qPrintable(m_dialogs.join(u',')));

        // The storage column shows the new layout: external iff size >= threshold.
        const QString dataFile = QStringLiteral("model.onnx.data");
        for (const auto& tensor : built) {
            const int row = sourceRowOf(window, QString::fromStdString(tensor.name));
            const QString storage = window.tensorModel()->index(row, TensorTableModel::Storage).data().toString();
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
                QCOMPARE(window.tensorModel()->index(row, TensorTableModel::Offset, {})
                             .data(TensorTableModel::SortRole).toULongLong(), tensors[i].external.offset);
            }
            auto bytes = reloaded.value()->read(i);
            QVERIFY(bytes.ok());
            const auto span = bytes.value().bytes();
            QCOMPARE(std::string(reinterpret_cast<const char*>(span.data()), span.size()), built[i].content);
        }
        QVERIFY(reloaded.value()->problems().empty());
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
        QVERIFY(window.openFile(path, true));
        window.repackPanel()->thresholdEdit()->setValue(1024);
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QVERIFY(window.saveTo(path));
        window.cancelSave();
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.first().first().toBool(), false);
        QVERIFY2(m_dialogs.isEmpty(), qPrintable(m_dialogs.join(u','))); // cancelling is not an error
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
