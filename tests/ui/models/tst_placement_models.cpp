// ui/models/placement_state.h and placement_model.h alone, with no window and no widget: the
// pane's destinations follow the snapshot and the pins, every edit undoes, and the item model
// passes QAbstractItemModelTester through all of it. Links repack_ui_models only.
#include "tests/ui/ui_fixtures.h"

#include "core/model/model.h"
#include "tests/support/save_fixtures.h"
#include "ui/models/model_snapshot.h"
#include "ui/models/placement_model.h"
#include "ui/models/placement_state.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

using repack::Placement;
using ui::PlacementModel;

namespace {

int tensorOf(const ui::ModelSnapshot& snapshot, const QString& name)
{
    for (int i = 0; i < snapshot.tensors.size(); ++i)
        if (snapshot.tensors[i].name == name)
            return i;
    return -1;
}

// The rows as "kind location count", one string a row.
QStringList rowsOf(const PlacementModel& model)
{
    QStringList rows;
    for (int r = 0; r < model.rowCount(); ++r) {
        const QModelIndex row = model.index(r);
        rows << QStringLiteral("%1 %2 %3")
                    .arg(row.data(PlacementModel::KindRole).toInt())
                    .arg(row.data(PlacementModel::LocationRole).toString())
                    .arg(row.data(PlacementModel::PinnedCountRole).toInt());
    }
    return rows;
}

} // namespace

class TestPlacementModels : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void destinationsFollowSnapshotAndPins()
    {
        QTemporaryDir dir;
        QVERIFY(!uifixtures::writeMixedModel(dir.path()).empty());
        auto model = fixtures::loadModel(dir.filePath(QStringLiteral("model.onnx")));
        QVERIFY(model);
        const ui::ModelSnapshot snapshot = ui::takeSnapshot(*model);

        ui::PlacementState state;
        PlacementModel destinations(&state);
        QAbstractItemModelTester tester(
            &destinations, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(destinations.rowCount(), 0); // no model, no rows

        state.setSnapshot(snapshot);
        destinations.setSnapshot(snapshot);
        destinations.setSaveDataFile(QStringLiteral("weights.bin"));
        const int inlineKind = int(PlacementModel::Kind::Inline);
        const int saveKind = int(PlacementModel::Kind::SaveDataFile);
        const int newKind = int(PlacementModel::Kind::NewFile);
        // The save's data file is the model's own weights.bin: one row, not two.
        QCOMPARE(rowsOf(destinations),
            QStringList({QStringLiteral("%1  0").arg(inlineKind),
                QStringLiteral("%1 weights.bin 0").arg(saveKind),
                QStringLiteral("%1  0").arg(newKind)}));

        // A pin to a new file adds its row with the count; another to Inline counts there.
        const int c = tensorOf(snapshot, QStringLiteral("ext_c"));
        const int d = tensorOf(snapshot, QStringLiteral("ext_d"));
        QVERIFY(c >= 0 && d >= 0);
        QSignalSpy changed(&state, &ui::PlacementState::pinsChanged);
        QVERIFY(state.pinTo({c, d}, {Placement::External, "extra.data"}));
        QVERIFY(state.pinTo({tensorOf(snapshot, QStringLiteral("ext_e"))}, {Placement::Inline}));
        QCOMPARE(changed.size(), 2);
        const int extra = destinations.rowOf(QStringLiteral("extra.data"));
        QVERIFY(extra >= 0);
        QCOMPARE(destinations.index(extra).data(PlacementModel::PinnedCountRole).toInt(), 2);
        QVERIFY(!destinations.index(extra).data(PlacementModel::OnDiskRole).toBool());
        QCOMPARE(destinations.index(0).data(PlacementModel::PinnedCountRole).toInt(), 1);
        QCOMPARE(destinations.destination(extra).location, std::string("extra.data"));
        QCOMPARE(state.pinnedCount(), 3);

        // Undo takes the edits back in order; redo brings them again.
        state.undoStack()->undo();
        QCOMPARE(destinations.index(0).data(PlacementModel::PinnedCountRole).toInt(), 0);
        state.undoStack()->undo();
        QCOMPARE(destinations.rowOf(QStringLiteral("extra.data")), -1);
        QCOMPARE(state.pinnedCount(), 0);
        state.undoStack()->redo();
        QCOMPARE(destinations.index(destinations.rowOf(QStringLiteral("extra.data")))
                     .data(PlacementModel::PinnedCountRole)
                     .toInt(),
            2);

        // Another model: no pins, no history.
        state.setSnapshot(snapshot);
        QCOMPARE(state.pinnedCount(), 0);
        QCOMPARE(state.undoStack()->count(), 0);
        QCOMPARE(destinations.rowOf(QStringLiteral("extra.data")), -1);
    }
};

QTEST_MAIN(TestPlacementModels)
#include "tst_placement_models.moc"
