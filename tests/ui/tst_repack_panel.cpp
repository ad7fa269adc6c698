// The repack panel: data file names validated as typed, the widgets mapped onto the core's
// SaveOptions (the align threshold and the data file format too), and only alignments the core
// accepts offered.
#include "ui/util/data_file_name.h"
#include "ui/views/repack_panel.h"
#include "ui/views/size_edit.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

class TestRepackPanel : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void dataFileName_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("valid");
        QTest::addRow("empty means the default") << QString() << true;
        QTest::addRow("plain name") << QStringLiteral("model.onnx.data") << true;
        QTest::addRow("in a subfolder") << QStringLiteral("weights/model.bin") << true;
        QTest::addRow("absolute") << QStringLiteral("/tmp/model.data") << false;
        QTest::addRow("escaping with ..") << QStringLiteral("../model.data") << false;
        QTest::addRow(".. in the middle") << QStringLiteral("a/../../b.data") << false;
        QTest::addRow("a folder") << QStringLiteral("weights/") << false;
        QTest::addRow("empty component") << QStringLiteral("a//b") << false;
        QTest::addRow("dots in a name are fine") << QStringLiteral("model..data") << true;
        // The core's rules (core/file_names.h), so the panel refuses what a save refuses.
        QTest::addRow("a save's temporary name")
            << QStringLiteral("model.onnx.data.repack-tmp-0123456789ab") << false;
        QTest::addRow("a backslash") << QStringLiteral("a\\b.data") << false;
    }

    void dataFileName()
    {
        QFETCH(QString, name);
        QFETCH(bool, valid);
        QCOMPARE(ui::dataFileNameError(name).isEmpty(), valid);
        ui::RepackPanel panel;
        panel.dataFileEdit()->setText(name);
        QCOMPARE(panel.validationError().isEmpty(), valid);
    }

    void sizeEditUnits_data()
    {
        QTest::addColumn<double>("number");
        QTest::addColumn<int>("unit");
        QTest::addColumn<qulonglong>("bytes");
        QTest::addRow("bytes") << 100.0 << 0 << qulonglong(100);
        QTest::addRow("KiB") << 4.0 << 1 << qulonglong(4096);
        QTest::addRow("fractional MiB") << 1.5 << 2 << qulonglong(1572864);
        QTest::addRow("GiB") << 2.0 << 3 << qulonglong(2147483648ull);
    }

    void sizeEditUnits()
    {
        QFETCH(double, number);
        QFETCH(int, unit);
        QFETCH(qulonglong, bytes);
        ui::SizeEdit edit;
        edit.unitBox()->setCurrentIndex(unit);
        edit.spinBox()->setValue(number);
        QCOMPARE(qulonglong(edit.value()), bytes);
        ui::SizeEdit other;
        other.setValue(bytes);
        QCOMPARE(qulonglong(other.value()), bytes);
    }

    void optionsFollowTheWidgets()
    {
        ui::RepackPanel panel;
        QSignalSpy changed(&panel, &ui::RepackPanel::optionsChanged);
        panel.thresholdEdit()->setValue(64 * 1024);
        panel.dataFileEdit()->setText(QStringLiteral("w.bin"));
        QVERIFY(changed.count() >= 2);
        const repack::SaveOptions options = *panel.options();
        QCOMPARE(options.threshold, uint64_t(64 * 1024));
        QCOMPARE(options.dataFile, std::string("w.bin"));
        QCOMPARE(options.alignment, uint64_t(4096)); // SPEC default
        QVERIFY(options.includeAttributes);
        QCOMPARE(options.shardSize, uint64_t(0));
        QVERIFY(!options.checksum);
        QVERIFY(!options.force);
        QVERIFY(!options.removeUnused); // deleting files is never the default
    }

    // SPEC 5a: an in-place save removes data files it stops using only when asked to, and
    // never one another model uses (the tooltip says so).
    // The panel fills the core's request (as the CLI's flags and the Python keywords do): the
    // core's rules apply to it, and its refusals name the panel's fields.
    void theCoreAppliesThePanelsRequest()
    {
        ui::RepackPanel panel;
        panel.setModelPath(QStringLiteral("m.onnx"));
        panel.thresholdEdit()->setValue(4096);
        const repack::SaveRequest request = panel.request();
        QCOMPARE(request.threshold, std::string("4KiB"));
        QVERIFY(request.wait.empty() && !request.force); // the save flow's to decide
        QCOMPARE(panel.options()->threshold, uint64_t(4096));

        repack::SaveRequest refused = request;
        refused.align = std::string("3"); // not a char* assignment: GCC 12 -Wrestrict false alarm
        auto applied = repack::applySaveRequest(refused, "m.onnx", ui::RepackPanel::optionNames());
        QVERIFY(!applied);
        QCOMPARE(applied.error().kind, repack::ErrorKind::Usage);
        QVERIFY2(applied.error().message.starts_with("Alignment: '3' must be 0 or a power of two"),
            applied.error().message.c_str());
    }

    void removeUnusedMapsOntoTheOption()
    {
        ui::RepackPanel panel;
        QCheckBox* box = panel.removeUnusedBox();
        QVERIFY(!box->isChecked());
        QVERIFY(box->toolTip().contains(QStringLiteral("another model")));
        QSignalSpy changed(&panel, &ui::RepackPanel::optionsChanged);
        box->setChecked(true);
        QCOMPARE(changed.count(), 1);
        QVERIFY(panel.options()->removeUnused);
        ui::RepackPanel restored;
        restored.restoreSettings(panel.settingValues());
        QVERIFY(restored.options()->removeUnused);
    }

    // SPEC 5a "Limits": alignment is 0 or a power of two up to 16 MiB.
    void alignmentOffersOnlyWhatTheCoreAccepts()
    {
        ui::RepackPanel panel;
        QComboBox* box = panel.alignmentBox();
        QVERIFY(box->count() > 1);
        for (int i = 0; i < box->count(); ++i) {
            box->setCurrentIndex(i);
            const uint64_t alignment = panel.options()->alignment;
            QVERIFY2(
                alignment == 0 || ((alignment & (alignment - 1)) == 0 && alignment <= (16u << 20)),
                qPrintable(box->itemText(i)));
        }
    }

    void alignThresholdMapsOntoTheOptionAndPersists()
    {
        ui::RepackPanel panel;
        // The core's default, not a second copy of it.
        QCOMPARE(panel.options()->alignThreshold, repack::SaveOptions{}.alignThreshold);
        QSignalSpy changed(&panel, &ui::RepackPanel::optionsChanged);
        panel.alignThresholdEdit()->setValue(64 * 1024);
        QVERIFY(!changed.isEmpty());
        QCOMPARE(panel.options()->alignThreshold, uint64_t(64 * 1024));
        QCOMPARE(panel.settingValues().value(QStringLiteral("repack/alignThreshold")).toULongLong(),
            64ull * 1024);

        ui::RepackPanel restored;
        restored.restoreSettings(panel.settingValues());
        QCOMPARE(restored.options()->alignThreshold, uint64_t(64 * 1024));
        // Settings from before the control existed keep the default.
        ui::RepackPanel older;
        older.alignThresholdEdit()->setValue(7);
        older.restoreSettings({{QStringLiteral("repack/threshold"), 2048}});
        QCOMPARE(older.options()->alignThreshold, repack::SaveOptions{}.alignThreshold);

        // Without alignment there is nothing to align from.
        panel.alignmentBox()->setCurrentIndex(0);
        QCOMPARE(panel.options()->alignment, uint64_t(0));
        QVERIFY(!panel.alignThresholdEdit()->isEnabled());
        panel.alignmentBox()->setCurrentIndex(1);
        QVERIFY(panel.alignThresholdEdit()->isEnabled());
    }

    // Safetensors data files: the format reaches the options, alignment cannot be
    // chosen (the format has no gaps), the default name is the one planSave gives, it persists.
    void safetensorsFormatMapsOntoTheOptions()
    {
        ui::RepackPanel panel;
        panel.setModelPath(QStringLiteral("model.onnx"));
        QCOMPARE(panel.options()->format, repack::DataFormat::Raw);
        QVERIFY(panel.alignmentBox()->isEnabled());
        QSignalSpy changed(&panel, &ui::RepackPanel::optionsChanged);
        panel.formatBox()->setCurrentIndex(
            panel.formatBox()->findData(int(repack::DataFormat::Safetensors)));
        QVERIFY(!changed.isEmpty());
        QCOMPARE(panel.options()->format, repack::DataFormat::Safetensors);
        QCOMPARE(panel.options()->alignment, uint64_t(0));
        QVERIFY(!panel.alignmentBox()->isEnabled());
        QVERIFY(!panel.alignThresholdEdit()->isEnabled());
        QCOMPARE(panel.dataFileEdit()->placeholderText(), QStringLiteral("model.onnx.safetensors"));

        ui::RepackPanel restored;
        restored.restoreSettings(panel.settingValues());
        QCOMPARE(restored.options()->format, repack::DataFormat::Safetensors);

        panel.formatBox()->setCurrentIndex(0);
        QCOMPARE(panel.options()->format, repack::DataFormat::Raw);
        QVERIFY(panel.alignmentBox()->isEnabled());
        QVERIFY(panel.options()->alignment != 0);
        QCOMPARE(panel.dataFileEdit()->placeholderText(), QStringLiteral("model.onnx.data"));
    }

    void settingsRoundTrip()
    {
        QTemporaryDir dir;
        QSettings settings(dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
        ui::RepackPanel panel;
        panel.thresholdEdit()->setValue(3 * 1024 * 1024);
        panel.dataFileEdit()->setText(QStringLiteral("x.data"));
        // Through an ini file, as QSettings stores them.
        const QVariantMap values = panel.settingValues();
        for (auto it = values.cbegin(); it != values.cend(); ++it)
            settings.setValue(it.key(), it.value());
        settings.sync();
        QVariantMap stored;
        const QSettings reread(dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
        for (const QString& key : reread.allKeys())
            stored.insert(key, reread.value(key));
        QCOMPARE(stored.keys(), values.keys());
        ui::RepackPanel restored;
        restored.restoreSettings(stored);
        QCOMPARE(restored.options()->threshold, uint64_t(3 * 1024 * 1024));
        QCOMPARE(restored.options()->dataFile, std::string("x.data"));
    }

    // Issue 27 items 1 and 2: a field set to what it shows is no edit; a layout field changed
    // is one undoable edit that also asks for the rule, and undo puts both back.
    void editsAreUndoableAndAskForTheRule()
    {
        ui::RepackPanel panel;
        QUndoStack stack;
        panel.setUndoStack(&stack);
        panel.startFrom({});
        QVERIFY(panel.keepsPlacement());
        QVERIFY(panel.options()->keepPlacement);
        QSignalSpy changed(&panel, &ui::RepackPanel::optionsChanged);

        panel.thresholdEdit()->setValue(panel.thresholdEdit()->value()); // says valueChanged
        QCOMPARE(stack.count(), 0);
        QVERIFY(panel.keepsPlacement());
        QVERIFY(!panel.isEdited());
        QCOMPARE(changed.count(), 0);

        panel.checksumBox()->setChecked(true); // not a layout option: still kept
        QVERIFY(panel.keepsPlacement());
        QVERIFY(panel.options()->checksum);
        panel.thresholdEdit()->setValue(4096);
        QVERIFY(!panel.keepsPlacement());
        QCOMPARE(panel.options()->threshold, uint64_t(4096));
        QVERIFY(!panel.options()->keepPlacement);
        QCOMPARE(stack.count(), 2);
        QCOMPARE(panel.editedFields(),
            QStringList({QStringLiteral("Keep tensors where they are"), QStringLiteral("Threshold"),
                QStringLiteral("Write SHA-1 checksums")}));

        QSignalSpy revisited(&panel, &ui::RepackPanel::editRevisited);
        stack.undo();
        QVERIFY(panel.keepsPlacement());
        QCOMPARE(panel.thresholdEdit()->value(), repack::SaveOptions{}.threshold);
        QCOMPARE(revisited.count(), 1);
        QCOMPARE(revisited.constFirst().constFirst().toString(), QStringLiteral("Threshold"));
        stack.undo();
        QVERIFY(!panel.checksumBox()->isChecked());
        QVERIFY(!panel.isEdited());
        stack.redo();
        stack.redo();
        QCOMPARE(panel.thresholdEdit()->value(), uint64_t(4096));
        QVERIFY(!panel.keepsPlacement());
        QVERIFY(panel.checksumBox()->isChecked());
    }
};

QTEST_MAIN(TestRepackPanel)
#include "tst_repack_panel.moc"
