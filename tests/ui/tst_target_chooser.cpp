// The repack panel's Target chooser: choosing a target sets the fields it decides
// and the limits behind them, fields edited afterwards win (as explicit CLI options do), the
// data file is named after the model it is saved as, and the choice is remembered.
#include "core/model/model.h"
#include "core/plan/save_plan.h"
#include "core/plan/targets.h"
#include "tests/support/save_fixtures.h"
#include "ui/views/repack_panel.h"
#include "ui/views/size_edit.h"

#include <QComboBox>
#include <QLineEdit>
#include <QTemporaryDir>
#include <QtTest>

namespace {

void choose(ui::RepackPanel& panel, const QString& target)
{
    const int index = panel.targetBox()->findData(target);
    QVERIFY2(index >= 0, qPrintable(target));
    panel.targetBox()->setCurrentIndex(index);
}

} // namespace

class TestTargetChooser : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void listsEveryTarget()
    {
        ui::RepackPanel panel;
        QCOMPARE(panel.targetBox()->count(), int(repack::targets().size()) + 1);
        QVERIFY(panel.targetBox()->currentData().toString().isEmpty()); // None by default
        QCOMPARE(panel.options()->shardNaming, repack::ShardNaming::Numbered);
        QVERIFY(panel.options()->dataSuffix.empty());
    }

    void webSetsChunksAndLimits()
    {
        ui::RepackPanel panel;
        panel.setModelPath(QStringLiteral("encoder.onnx"));
        QSignalSpy changed(&panel, &ui::RepackPanel::optionsChanged);
        choose(panel, QStringLiteral("web"));
        QVERIFY(changed.count() >= 1);
        const repack::SaveOptions options = *panel.options();
        QCOMPARE(options.shardSize, repack::kBrowserBufferLimit - 1);
        QCOMPARE(options.shardNaming, repack::ShardNaming::Chunks);
        QVERIFY(options.shardSizeIsLimit);
        QCOMPARE(options.maxShards, repack::kBrowserMaxChunks);
        QCOMPARE(panel.dataFileEdit()->placeholderText(), QStringLiteral("encoder.onnx_data"));
        // Named after the model it is saved as, by the core, as the CLI's --target web names it.
        QCOMPARE(options.dataFile, std::string("encoder.onnx_data"));
        QCOMPARE(panel.options(QStringLiteral("decoder.onnx"))->dataFile,
            std::string("decoder.onnx_data"));

        // Fields edited afterwards win.
        panel.shardSizeEdit()->setValue(1 << 20);
        QCOMPARE(panel.options()->shardSize, uint64_t(1) << 20);
        QCOMPARE(panel.options()->shardNaming, repack::ShardNaming::Chunks);
    }

    void ortSetsAlignment()
    {
        ui::RepackPanel panel;
        choose(panel, QStringLiteral("ort"));
        QCOMPARE(panel.options()->alignment, repack::kWindowsMapGranularity);
        panel.alignmentBox()->setCurrentIndex(1); // 4 KiB, chosen by hand
        QCOMPARE(panel.options()->alignment, uint64_t(4096));
        choose(panel, QStringLiteral("optimum"));
        QCOMPARE(panel.options()->alignment, uint64_t(4096));
        QCOMPARE(panel.options()->dataSuffix, std::string("_data"));
    }

    // What the panel's options plan when saving as another model: that model's name.
    void savedAsAnotherModelNamesItsData()
    {
        QTemporaryDir dir;
        const QString in
            = fixtures::writeUint8Model(dir.path(), "in.onnx", {4096, 8192}, 0, "src.data");
        auto model = fixtures::loadModel(in);
        QVERIFY(model);
        ui::RepackPanel panel;
        panel.setModelPath(QStringLiteral("in.onnx"));
        choose(panel, QStringLiteral("web"));
        panel.shardSizeEdit()->setValue(8192);
        // As the save flow applies the panel's request: for the model it writes.
        const QString other = dir.filePath("other.onnx");
        auto plan = repack::planSave(*model, other.toStdString(), *panel.options(other));
        QVERIFY2(plan, plan ? "" : plan.error().message.c_str());
        const std::vector<std::string> expected{"other.onnx_data", "other.onnx_data_1"};
        QCOMPARE(plan->files, expected);
    }

    void rememberedInSettings()
    {
        ui::RepackPanel panel;
        choose(panel, QStringLiteral("hub"));
        panel.shardSizeEdit()->setValue(3u << 30); // changed after choosing: kept
        ui::RepackPanel restored;
        restored.restoreSettings(panel.settingValues());
        QCOMPARE(restored.targetBox()->currentData().toString(), QStringLiteral("hub"));
        QCOMPARE(restored.options()->shardSize, uint64_t(3) << 30);
        QCOMPARE(restored.options()->dataSuffix, std::string("_data"));
    }
};

QTEST_MAIN(TestTargetChooser)
#include "tst_target_chooser.moc"
