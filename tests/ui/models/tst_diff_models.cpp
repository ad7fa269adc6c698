// ui/models/diff_table_model.h and layout_diff.h alone, with no window: the Compare window's
// table model and its kind filter over a real diff of two models, checked by
// QAbstractItemModelTester as the diff comes in, is refined by the byte comparison, and goes.
// Links repack_ui_models only.
#include "tests/ui/ui_fixtures.h"

#include "core/inspect/diff.h"
#include "core/model/model.h"
#include "ui/models/diff_table_model.h"
#include "ui/models/layout_diff.h"
#include "ui/models/model_snapshot.h"

#include <QAbstractItemModelTester>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <memory>

using ui::ChangeKind;

namespace {

std::string fsPath(const QString& path)
{
    return path.toStdString();
}

// The row of the tensor `name` in `diff`; -1 when it has none.
int rowNamed(const ui::LayoutDiff& diff, const QString& name)
{
    const auto it = std::find_if(diff.tensors.begin(), diff.tensors.end(),
        [&name](const auto& tensor) { return tensor.name == name; });
    return it == diff.tensors.end() ? -1 : int(it - diff.tensors.begin());
}

} // namespace

class TestDiffModels : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void diffTableModelPassesTester()
    {
        QTemporaryDir dirA;
        QTemporaryDir dirB;
        QVERIFY(uifixtures::writeComparePair(dirA.path(), dirB.path()));
        auto a = repack::Model::load(fsPath(dirA.filePath(QStringLiteral("m.onnx"))));
        auto b = repack::Model::load(fsPath(dirB.filePath(QStringLiteral("m.onnx"))));
        QVERIFY(a && b);
        repack::DiffOptions quick;
        quick.compareContent = false;
        auto entries = repack::diffModels(**a, **b, quick);
        QVERIFY(entries);
        auto diff = std::make_shared<ui::LayoutDiff>(
            ui::compareDiff(ui::takeSnapshot(**a), ui::takeSnapshot(**b), *entries, false));

        ui::DiffTableModel model;
        ui::DiffKindFilter filter;
        filter.setSourceModel(&model);
        QAbstractItemModelTester tester(
            &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(
            &filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setDiff(diff);
        QCOMPARE(model.rowCount(), 7);
        QCOMPARE(model.columnCount(), int(ui::DiffTableModel::ColumnCount));
        filter.sort(ui::DiffTableModel::ABytes, Qt::DescendingOrder);
        filter.sort(ui::DiffTableModel::Change);

        auto full = repack::diffModels(**a, **b);
        QVERIFY(full);
        auto next = std::make_shared<ui::LayoutDiff>(*diff);
        const auto changed = ui::applyContentDiff(*next, *full);
        model.updateKinds(next, changed);
        const int content = rowNamed(*next, QStringLiteral("content"));
        QCOMPARE(model.index(content, ui::DiffTableModel::Change).data().toString(),
            QStringLiteral("content changed"));
        QCOMPARE(model.index(content, 0).data(ui::DiffTableModel::KindRole).toInt(),
            int(ChangeKind::ContentChanged));
        const int added = rowNamed(*next, QStringLiteral("added"));
        QCOMPARE(model.index(added, ui::DiffTableModel::AStorage).data().toString(),
            QStringLiteral("—"));
        QCOMPARE(model.index(added, ui::DiffTableModel::BOffset).data().toString(),
            QStringLiteral("5120"));

        filter.setKindVisible(ChangeKind::Unchanged, false);
        QCOMPARE(filter.rowCount(), 5);
        for (int k = 0; k < ui::kChangeKindCount; ++k)
            filter.setKindVisible(ChangeKind(k), ChangeKind(k) == ChangeKind::ContentChanged);
        QCOMPARE(filter.rowCount(), 1);
        QCOMPARE(filter.index(0, 0).data().toString(), QStringLiteral("content"));
        model.setDiff(nullptr);
        QCOMPARE(filter.rowCount(), 0);
    }
};

QTEST_MAIN(TestDiffModels)
#include "tst_diff_models.moc"
