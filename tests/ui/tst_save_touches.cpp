// Issue 36 item 2, in the real window: a save writes only the data files whose bytes change.
// A model keeps its weights in w1.bin and w2.bin; the user clicks a row of w1.bin, pins it
// inline with Ctrl+I and saves with Ctrl+S. w2.bin, untouched by the plan, keeps its inode,
// its mtime and its bytes; w1.bin is written anew without the tensor; every value reads back.
#include "ui_fixtures.h"
#include "window_steps.h"

#include "core/model/model.h"
#include "tests/support/data_file_builder.h"
#include "tests/support/model_builder.h"
#include "tests/support/python_reader.h"
#include "tests/support/save_fixtures.h"
#include "tests/support/tensor_builder.h"
#include "ui/models/placement_state.h"
#include "ui/models/tensor_filter_proxy.h"
#include "ui/models/tensor_table_model.h"
#include "ui/windows/main_window.h"

#include <QApplication>
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include <map>
#include <string>

namespace {

using windowsteps::open;
using windowsteps::settled;
using windowsteps::tensorOf;

struct FileStamp {
    ino_t inode = 0;
    timespec mtime{};
    QByteArray bytes;
};

FileStamp stampOf(const QString& path)
{
    FileStamp stamp;
    struct stat st { };
    if (::stat(QFile::encodeName(path).constData(), &st) == 0) {
        stamp.inode = st.st_ino;
        stamp.mtime = st.st_mtim;
    }
    QFile file(path);
    if (file.open(QIODevice::ReadOnly))
        stamp.bytes = file.readAll();
    return stamp;
}

// a1, a2 in w1.bin; b1, b2 in w2.bin; the bytes of each tensor by name.
std::map<std::string, std::string> writeTwoFileModel(const QString& dir)
{
    onnx::ModelProto model = fixtures::emptyModel();
    onnx::GraphProto& graph = *model.mutable_graph();
    fixtures::DataFileBuilder w1("w1.bin");
    fixtures::DataFileBuilder w2("w2.bin");
    std::map<std::string, std::string> contents;
    auto add = [&](const char* name, fixtures::DataFileBuilder& file, uint8_t seed) {
        onnx::TensorProto tensor = fixtures::rawTensor(
            name, onnx::TensorProto::FLOAT, {1024}, fixtures::patternBytes(4096, seed));
        contents[name] = tensor.raw_data();
        file.append(tensor, 64);
        *graph.add_initializer() = tensor;
    };
    add("a1", w1, 1);
    add("a2", w1, 2);
    add("b1", w2, 3);
    add("b2", w2, 4);
    if (!w1.save(dir) || !w2.save(dir)
        || !fixtures::saveModel(model, QDir(dir).filePath(QStringLiteral("model.onnx"))))
        return {};
    return contents;
}

// Clicks the table row of `tensor`, as a user selects it.
bool clickRow(ui::MainWindow& window, int tensor)
{
    QTableView* table = window.tensorView();
    const QModelIndex row = window.tensorProxy()->mapFromSource(
        window.tensorModel()->index(tensor, ui::TensorTableModel::Name));
    if (!row.isValid())
        return false;
    table->scrollTo(row);
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(row).center());
    return table->selectionModel()->isRowSelected(row.row(), row.parent());
}

} // namespace

class TestSaveTouches : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("onnx-repack-tests"));
    }

    void aPinOutOfOneFileLeavesTheOtherUntouched()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto contents = writeTwoFileModel(dir.path());
        QVERIFY(!contents.empty());
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        const FileStamp w1Before = stampOf(dir.filePath(QStringLiteral("w1.bin")));
        const FileStamp w2Before = stampOf(dir.filePath(QStringLiteral("w2.bin")));
        QVERIFY(w2Before.inode != 0 && !w2Before.bytes.isEmpty());

        ui::MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, path));
        QVERIFY(clickRow(window, tensorOf(window, QStringLiteral("a2"))));
        QTest::keyClick(window.tensorView(), Qt::Key_I, Qt::ControlModifier);
        QVERIFY(settled(window));
        QCOMPARE(window.placementState()->pinnedCount(), 1);

        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QTest::keyClick(window.tensorView(), Qt::Key_S, Qt::ControlModifier);
        QVERIFY(finished.wait(60000));
        QVERIFY(finished.constFirst().constFirst().toBool());

        const FileStamp w1After = stampOf(dir.filePath(QStringLiteral("w1.bin")));
        const FileStamp w2After = stampOf(dir.filePath(QStringLiteral("w2.bin")));
        // The untouched file: same inode, same mtime, same bytes.
        QCOMPARE(w2After.inode, w2Before.inode);
        QCOMPARE(w2After.mtime.tv_sec, w2Before.mtime.tv_sec);
        QCOMPARE(w2After.mtime.tv_nsec, w2Before.mtime.tv_nsec);
        QCOMPARE(w2After.bytes, w2Before.bytes);
        // The file a tensor left was written anew, shorter by it.
        QVERIFY(w1After.inode != w1Before.inode);
        QVERIFY(w1After.bytes.size() < w1Before.bytes.size());

        auto saved = fixtures::loadModel(path);
        QVERIFY(saved);
        const auto values = fixtures::readAllTensors(*saved);
        QCOMPARE(values.size(), contents.size());
        for (const repack::TensorInfo& tensor : saved->tensors()) {
            QCOMPARE(tensor.isExternal(), tensor.name != "a2");
            QCOMPARE(values.at(tensor.qualifiedName()), contents.at(tensor.name));
        }
        // onnx 1.12's reader agrees.
        QVERIFY_PYTHON_LOADS(QStringLiteral(REPACK_VALUES_SCRIPT), path,
            fixtures::hashesOf(contents), QStringLiteral("after the save"));
    }

    // Issue 49 item 5: the status bar names the files written and, apart, the file kept; it
    // never says the kept w2.bin was saved.
    void theStatusBarNamesTheFilesWrittenApartFromTheKept()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(!writeTwoFileModel(dir.path()).empty());
        ui::MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(open(window, dir.filePath(QStringLiteral("model.onnx"))));
        QVERIFY(clickRow(window, tensorOf(window, QStringLiteral("a2"))));
        QTest::keyClick(window.tensorView(), Qt::Key_I, Qt::ControlModifier);
        QVERIFY(settled(window));
        QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
        QTest::keyClick(window.tensorView(), Qt::Key_S, Qt::ControlModifier);
        QVERIFY(finished.wait(60000));
        QVERIFY(finished.constFirst().constFirst().toBool());

        const QString message = window.statusBar()->currentMessage();
        const QString saved = message.section(u':', 0, 0);
        QCOMPARE(saved, QStringLiteral("Saved model.onnx, w1.bin"));
        QVERIFY2(message.contains(QStringLiteral("; kept w2.bin unchanged (not written)")),
            qPrintable(message));
    }
};

QTEST_MAIN(TestSaveTouches)
#include "tst_save_touches.moc"
