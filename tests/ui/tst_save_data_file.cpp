// Issue 36 item 1: "the save's data file" is the one the repack panel's Data file field shows,
// everywhere. After a save with weights.bin typed in, or after "Write model.onnx-2.data
// Instead" in the replace dialog, the field shows that name, and so do the Placement pane's
// "(save's data file)" row, Ctrl+E and the next save: a pin goes to that file, with no dialog
// about another model's file and no second data file beside it. Driven with QTest key and mouse
// events on a shown window.
#include "dialog_answerer.h"
#include "ui_fixtures.h"
#include "window_steps.h"

#include "ui/models/placement_model.h"
#include "ui/models/tensor_filter_proxy.h"
#include "ui/models/tensor_table_model.h"
#include "ui/util/settings_store.h"
#include "ui/views/placement_view.h"
#include "ui/views/repack_panel.h"
#include "ui/windows/main_window.h"

#include <QAction>
#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

namespace {

using windowsteps::open;
using windowsteps::saveWithKeys;
using windowsteps::settled;
using windowsteps::showActive;
using windowsteps::tensorOf;

// The data file tensor `name` of the model at `path` is in, or "inline".
QString fileOf(const QString& path, const QString& name)
{
    return uifixtures::placesOn(path).value(name).section(u'@', 0, 0);
}

// Clicks the Name cell of tensor `name` in the table: it alone is selected.
void clickRow(ui::MainWindow& window, const QString& name)
{
    QTableView* table = window.tensorView();
    const QModelIndex cell = window.tensorProxy()->mapFromSource(
        window.tensorModel()->index(tensorOf(window, name), ui::TensorTableModel::Name));
    table->scrollTo(cell);
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(cell).center());
}

// The file the Placement pane's "(save's data file)" row names.
QString paneSaveDataFile(ui::MainWindow& window)
{
    const ui::PlacementModel* model = window.placementView()->model();
    for (int r = 0; r < model->rowCount(); ++r) {
        const QModelIndex row = model->index(r);
        if (row.data(ui::PlacementModel::KindRole).toInt()
            == int(ui::PlacementModel::Kind::SaveDataFile))
            return row.data(ui::PlacementModel::LocationRole).toString();
    }
    return {};
}

// Selects `name` by a click, pins it with Ctrl+E and saves with Ctrl+S.
bool pinToSaveDataFileAndSave(ui::MainWindow& window, const QString& name)
{
    // A dialog closed before: the window is active again, as on a desktop.
    window.activateWindow();
    if (!QTest::qWaitForWindowActive(&window))
        return false;
    clickRow(window, name);
    QTest::keyClick(window.tensorView(), Qt::Key_E, Qt::ControlModifier);
    if (!settled(window)
        || window.tensorModel()
                ->index(tensorOf(window, name), ui::TensorTableModel::Planned)
                .data()
                .toString()
            != QStringLiteral("* save's data file"))
        return false;
    return saveWithKeys(window);
}

// model.onnx (two inline tensors, w0 of 100 bytes, w1 of 8 KiB) beside other.onnx, whose one
// tensor is in `dataFile` ("model.onnx.data": the file a save of model.onnx with the default
// name would replace). The path of model.onnx; `others` gets the bytes of other.onnx's data file.
QString modelBesideOther(const QString& dir, QByteArray& others,
    const QString& dataFile = QStringLiteral("model.onnx.data"))
{
    fixtures::DataFileBuilder data(dataFile.toStdString());
    onnx::ModelProto model = fixtures::emptyModel();
    onnx::TensorProto tensor = fixtures::rawTensor(
        "other_w", onnx::TensorProto::FLOAT, {1024}, fixtures::patternBytes(4096, 42));
    data.append(tensor);
    *model.mutable_graph()->add_initializer() = tensor;
    if (uifixtures::writeInlineModel(dir, {100, 8192}).empty() || !data.save(dir)
        || !fixtures::saveModel(model, QDir(dir).filePath(QStringLiteral("other.onnx"))))
        return {};
    others = uifixtures::folderContents(dir).value(dataFile);
    return QDir(dir).filePath(QStringLiteral("model.onnx"));
}

// A shown window on model.onnx beside other.onnx (modelBesideOther), whose data file is
// `dataFile`.
struct BesideOther {
    explicit BesideOther(const QString& dataFile = QStringLiteral("model.onnx.data"))
        : path(modelBesideOther(dir.path(), others, dataFile))
    {
    }
    QTemporaryDir dir;
    QByteArray others;
    QString path;
    ui::MainWindow window;
    bool ready = !others.isEmpty() && showActive(window) && open(window, path);
};

} // namespace

class TestSaveDataFile : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setOrganizationName(QStringLiteral("onnx-repack-tests"));
        QApplication::setApplicationName(QStringLiteral("tst_save_data_file"));
    }

    void init() { ui::writeSettings({{QStringLiteral("modelOptions"), QVariantMap()}}); }

    // Saved with weights.bin typed into the Data file field, then reopened: a Ctrl+E pin goes
    // to weights.bin, not to a second file model.onnx.data beside it.
    void aPinGoesToTheNameTheModelWasSavedWith()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeInlineModel(dir.path(), {100, 8192}).empty());
        const QString path = dir.filePath(QStringLiteral("model.onnx"));
        {
            ui::MainWindow window;
            QVERIFY(showActive(window));
            QVERIFY(open(window, path));
            QLineEdit* data = window.repackPanel()->dataFileEdit();
            QTest::mouseClick(data, Qt::LeftButton);
            QTest::keyClicks(data, QStringLiteral("weights.bin"));
            QVERIFY(!window.repackPanel()->keepsPlacement());
            QVERIFY(settled(window));
            QVERIFY(saveWithKeys(window));
            QCOMPARE(fileOf(path, QStringLiteral("w1")), QStringLiteral("weights.bin"));
        }
        DialogAnswerer answerer; // none is expected: each one is recorded and closed
        ui::MainWindow window;
        QVERIFY(showActive(window));
        QVERIFY(open(window, path));
        QCOMPARE(window.repackPanel()->dataFileEdit()->text(), QStringLiteral("weights.bin"));
        QVERIFY(window.repackPanel()->keepsPlacement());
        QCOMPARE(paneSaveDataFile(window), QStringLiteral("weights.bin"));
        QCOMPARE(window.repackPanel()->saveDataFile(), QStringLiteral("weights.bin"));
        // Edit > Move Selection To, and the table's Move to, name it.
        QCOMPARE(window.placementView()->moveExternalAction()->text(),
            QStringLiteral("weights.bin (Save's &Data File)"));

        QVERIFY(pinToSaveDataFileAndSave(window, QStringLiteral("w0")));
        QCOMPARE(answerer.titles, QStringList());
        QCOMPARE(fileOf(path, QStringLiteral("w0")), QStringLiteral("weights.bin"));
        QCOMPARE(fileOf(path, QStringLiteral("w1")), QStringLiteral("weights.bin"));
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("model.onnx.data"))));
    }

    // "Write model.onnx-2.data Instead" when other.onnx reads model.onnx.data: the next Ctrl+E
    // pin goes to model.onnx-2.data, and asks nothing about other.onnx's file.
    void aPinAfterWriteInsteadGoesToTheNewFile()
    {
        BesideOther setup;
        QVERIFY(setup.ready);
        auto& [dir, others, path, window, ready] = setup;
        QCheckBox* keep = window.repackPanel()->keepBox();
        QTest::mouseClick(keep, Qt::LeftButton, {}, QPoint(8, keep->height() / 2));
        QVERIFY(!window.repackPanel()->keepsPlacement());
        QVERIFY(settled(window));
        DialogAnswerer answerer(QStringLiteral("Write model.onnx-2.data Instead"));
        QVERIFY(saveWithKeys(window));
        QCOMPARE(answerer.titles, QStringList{QStringLiteral("Replace data file?")});
        QCOMPARE(window.repackPanel()->dataFileEdit()->text(), QStringLiteral("model.onnx-2.data"));
        QCOMPARE(paneSaveDataFile(window), QStringLiteral("model.onnx-2.data"));

        QVERIFY(pinToSaveDataFileAndSave(window, QStringLiteral("w0")));
        QCOMPARE(answerer.titles.size(), 1); // no second "Replace data file?"
        QCOMPARE(fileOf(path, QStringLiteral("w0")), QStringLiteral("model.onnx-2.data"));
        QCOMPARE(fileOf(path, QStringLiteral("w1")), QStringLiteral("model.onnx-2.data"));
        QCOMPARE(uifixtures::folderContents(dir.path()).value(QStringLiteral("model.onnx.data")),
            others);
    }

    // Keeping every tensor where it is, a Ctrl+E pin whose file other.onnx reads: the replace
    // dialog offers another name too, and the field shows it afterwards.
    void aKeptLayoutPinMayWriteAnotherFileInstead()
    {
        BesideOther setup;
        QVERIFY(setup.ready);
        auto& [dir, others, path, window, ready] = setup;
        QVERIFY(window.repackPanel()->keepsPlacement());
        DialogAnswerer answerer(QStringLiteral("Write model.onnx-2.data Instead"));
        QVERIFY(pinToSaveDataFileAndSave(window, QStringLiteral("w1")));
        QCOMPARE(answerer.titles, QStringList{QStringLiteral("Replace data file?")});
        QCOMPARE(fileOf(path, QStringLiteral("w1")), QStringLiteral("model.onnx-2.data"));
        QCOMPARE(fileOf(path, QStringLiteral("w0")), QStringLiteral("inline"));
        QCOMPARE(uifixtures::folderContents(dir.path()).value(QStringLiteral("model.onnx.data")),
            others);
        QCOMPARE(window.repackPanel()->dataFileEdit()->text(), QStringLiteral("model.onnx-2.data"));
        QCOMPARE(paneSaveDataFile(window), QStringLiteral("model.onnx-2.data"));
    }

    // Issue 49 item 4: weights.bin typed into the Data file field, and other.onnx reads
    // weights.bin: the preview warns before Save is pressed, and the name offered instead is
    // the one chosen with the first free number (weights-2.bin is taken: weights-3.bin), never
    // one made from the model's name.
    void writeInsteadKeepsTheChosenNameAndThePreviewWarnsFirst()
    {
        BesideOther setup(QStringLiteral("weights.bin"));
        QVERIFY(setup.ready);
        auto& [dir, others, path, window, ready] = setup;
        QFile taken(dir.filePath(QStringLiteral("weights-2.bin")));
        QVERIFY(taken.open(QIODevice::WriteOnly) && taken.write("not ours") == 8);
        taken.close();
        QLineEdit* data = window.repackPanel()->dataFileEdit();
        QTest::mouseClick(data, Qt::LeftButton);
        QTest::keyClicks(data, QStringLiteral("weights.bin"));
        QVERIFY(!window.repackPanel()->keepsPlacement());
        QVERIFY(settled(window));
        QVERIFY(QTest::qWaitFor([&window] { return window.saveAction()->isEnabled(); }, 60000));

        const QString preview = window.repackPanel()->previewLabel()->text();
        QVERIFY2(preview.contains(QStringLiteral("Save will ask first")), qPrintable(preview));
        QVERIFY2(
            preview.contains(QStringLiteral("other.onnx reads weights.bin")), qPrintable(preview));
        QVERIFY2(
            preview.contains(QStringLiteral("write weights-3.bin instead")), qPrintable(preview));

        DialogAnswerer answerer(QStringLiteral("Write weights-3.bin Instead"));
        QVERIFY(saveWithKeys(window));
        QCOMPARE(answerer.titles, QStringList{QStringLiteral("Replace data file?")});
        QCOMPARE(fileOf(path, QStringLiteral("w1")), QStringLiteral("weights-3.bin"));
        QCOMPARE(window.repackPanel()->dataFileEdit()->text(), QStringLiteral("weights-3.bin"));
        const auto files = uifixtures::folderContents(dir.path());
        QCOMPARE(files.value(QStringLiteral("weights.bin")), others);
        QCOMPARE(files.value(QStringLiteral("weights-2.bin")), QByteArray("not ours"));
        // Saved, nothing is in the way any more: the preview warns no longer.
        QVERIFY(!window.repackPanel()->previewLabel()->text().contains(
            QStringLiteral("Save will ask first")));
    }

    // Keeping the layout, saved as another model: an empty field names the data file after the
    // model saved, as its placeholder names it after the model shown.
    void theNameFollowsTheModelItIsSavedAs()
    {
        ui::RepackPanel panel;
        panel.setModelPath(QStringLiteral("/m/model.onnx"));
        QVERIFY(panel.keepsPlacement());
        QCOMPARE(panel.dataFileEdit()->placeholderText(), QStringLiteral("model.onnx.data"));
        QCOMPARE(panel.saveDataFile(), QStringLiteral("model.onnx.data"));
        QCOMPARE(panel.request(QStringLiteral("/m/copy.onnx")).data, std::string("copy.onnx.data"));
        auto options = panel.options(QStringLiteral("/m/copy.onnx"));
        QVERIFY(options);
        QVERIFY(options->keepPlacement);
        QCOMPARE(options->dataFile, std::string("copy.onnx.data"));
    }
};

QTEST_MAIN(TestSaveDataFile)
#include "tst_save_data_file.moc"
