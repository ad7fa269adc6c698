// The item models behind the tensor table and the problems panel: consistent under
// QAbstractItemModelTester, columns that say what the fixture put where, filters and sorting.
#include "tests/ui/ui_fixtures.h"

#include "core/model/model.h"
#include "tests/support/result_checks.h"
#include "ui/models/model_snapshot.h"
#include "ui/models/problems_model.h"
#include "ui/models/tensor_filter_proxy.h"
#include "ui/models/tensor_selection.h"
#include "ui/models/tensor_table_model.h"

#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>

using ui::TensorFilterProxy;
using ui::TensorTableModel;

class TestTensorModels : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::vector<uifixtures::BuiltTensor> m_built;
    ui::ModelSnapshot m_snapshot;

    int rowOf(const QAbstractItemModel& model, const std::string& name)
    {
        for (int r = 0; r < model.rowCount(); ++r) {
            if (model.index(r, TensorTableModel::Name).data().toString()
                == QString::fromStdString(name))
                return r;
        }
        return -1;
    }

private Q_SLOTS:
    // The one translation between a shared selection's rows and tensor indices, for every view:
    // through a sorting, filtering proxy, a hidden tensor has no row and cannot be selected.
    void selectionTranslatesRowsAndTensors()
    {
        QStandardItemModel source;
        for (const char* name : {"a", "b", "c", "d"})
            source.appendRow(new QStandardItem(QString::fromLatin1(name)));
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&source);
        proxy.setFilterRegularExpression(QStringLiteral("^[acd]$"));
        proxy.sort(0, Qt::DescendingOrder); // rows: d, c, a
        QItemSelectionModel selection(&proxy);
        ui::TensorSelection tensors;
        int changes = 0;
        QObject receiver;
        tensors.set(&selection, &proxy, &receiver, [&changes] { ++changes; });

        selection.select(QItemSelection(proxy.index(0, 0), proxy.index(1, 0)),
            QItemSelectionModel::Select | QItemSelectionModel::Rows);
        QCOMPARE(tensors.tensors(), (std::vector<int>{3, 2}));
        QVERIFY(changes > 0);
        QCOMPARE(tensors.rowOf(0), proxy.index(2, 0));
        QVERIFY(!tensors.rowOf(1).isValid()); // "b" is filtered out
        QVERIFY(!tensors.select(1, QItemSelectionModel::ClearAndSelect));
        QVERIFY(tensors.select(0, QItemSelectionModel::ClearAndSelect));
        QCOMPARE(tensors.tensors(), std::vector<int>{0});
        QCOMPARE(selection.currentIndex().row(), 2);
    }

    // What the layout map and the diff view share: the highlight follows the selection (and
    // only tensors the view shows), a click selects, Ctrl+click toggles, a hidden one refuses.
    void highlightFollowsTheSelectionAndClicksChangeIt()
    {
        QStandardItemModel source;
        for (const char* name : {"a", "b", "c", "d"})
            source.appendRow(new QStandardItem(QString::fromLatin1(name)));
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&source);
        proxy.setFilterRegularExpression(QStringLiteral("^[abd]$")); // "c" hidden
        QItemSelectionModel selection(&proxy);
        ui::SelectionHighlight highlight;
        int repaints = 0;
        QObject receiver;
        highlight.follow(&selection, &proxy, &receiver, [&repaints] { ++repaints; });
        highlight.setTensorCount(3); // the view shows tensors 0..2 only

        QVERIFY(highlight.click(1, Qt::NoModifier));
        QVERIFY(repaints > 0);
        QVERIFY(highlight.isHighlighted(1) && !highlight.isHighlighted(0));
        QVERIFY(highlight.click(0, Qt::ControlModifier));
        QCOMPARE(highlight.highlighted(), (std::vector<int>{1, 0}));
        QVERIFY(highlight.click(1, Qt::ControlModifier)); // toggled off
        QCOMPARE(highlight.highlighted(), std::vector<int>{0});
        QVERIFY(!highlight.click(2, Qt::NoModifier)); // its row is filtered out
        QVERIFY(highlight.click(3, Qt::ControlModifier)); // selected, but past what is shown
        QCOMPARE(highlight.highlighted(), std::vector<int>{0});
        QVERIFY(!highlight.isHighlighted(3));
    }

    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_built = uifixtures::writeMixedModel(m_dir.path());
        QVERIFY(!m_built.empty());
        auto model
            = repack::Model::load(m_dir.filePath(QStringLiteral("model.onnx")).toStdString());
        QVERIFY_OK(model);
        m_snapshot = ui::takeSnapshot(*model.value());
    }

    void modelsPassTheTester()
    {
        TensorTableModel tensors;
        QAbstractItemModelTester tensorTester(
            &tensors, QAbstractItemModelTester::FailureReportingMode::QtTest);
        TensorFilterProxy proxy;
        proxy.setSourceModel(&tensors);
        QAbstractItemModelTester proxyTester(
            &proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        ui::ProblemsModel problems;
        QAbstractItemModelTester problemsTester(
            &problems, QAbstractItemModelTester::FailureReportingMode::QtTest);

        tensors.setSnapshot(m_snapshot);
        problems.setSnapshot(m_snapshot);
        proxy.sort(TensorTableModel::Size, Qt::DescendingOrder);
        proxy.setText(QStringLiteral("ext"));
        proxy.setStorageFilter(TensorFilterProxy::StorageFilter::Inline);
        proxy.setText({});
        tensors.setSnapshot(m_snapshot); // reload
        tensors.setSnapshot({}); // close
        QCOMPARE(proxy.rowCount(), 0);
    }

    void columnsShowWhereEachTensorLives()
    {
        TensorTableModel tensors;
        tensors.setSnapshot(m_snapshot);
        QCOMPARE(tensors.rowCount(), int(m_built.size()));
        QCOMPARE(tensors.columnCount(), int(TensorTableModel::ColumnCount));
        for (const auto& built : m_built) {
            const int row = rowOf(tensors, built.name);
            QVERIFY2(row >= 0, built.name.c_str());
            auto cell = [&](int column, int role = Qt::DisplayRole) {
                return tensors.index(row, column).data(role);
            };
            QCOMPARE(cell(TensorTableModel::Size, TensorTableModel::SortRole).toULongLong(),
                built.bytes);
            QCOMPARE(cell(TensorTableModel::Name, TensorTableModel::ExternalRole).toBool(),
                built.external);
            if (built.external) {
                QCOMPARE(cell(TensorTableModel::Storage).toString(), QStringLiteral("weights.bin"));
                QCOMPARE(cell(TensorTableModel::Offset, TensorTableModel::SortRole).toULongLong(),
                    built.offset);
                QCOMPARE(cell(TensorTableModel::Length).toString(), QString::number(built.bytes));
            } else {
                QVERIFY(cell(TensorTableModel::Storage)
                            .toString()
                            .startsWith(QStringLiteral("inline")));
                QVERIFY(!cell(TensorTableModel::Offset).isValid());
            }
            QCOMPARE(cell(TensorTableModel::Status).toString(), QStringLiteral("ok"));
        }
        uint64_t total = 0;
        uint64_t largest = 0;
        for (const auto& built : m_built) {
            total += built.bytes;
            largest = std::max(largest, built.bytes);
        }
        QCOMPARE(tensors.index(0, 0).data(TensorTableModel::TotalRole).toULongLong(), total);
        QCOMPARE(tensors.index(0, 0).data(TensorTableModel::MaxRole).toULongLong(), largest);
        QVERIFY(!tensors.index(0, 0, tensors.index(0, 0)).isValid());
    }

    void sameTensorsIgnoresOnlyStorage()
    {
        ui::ModelSnapshot moved = m_snapshot;
        moved.tensors[0].external = !moved.tensors[0].external;
        moved.tensors[0].storage = QStringLiteral("elsewhere.bin");
        moved.tensors[0].offset = 4096;
        moved.tensors[0].status = QStringLiteral("missing-file");
        QVERIFY(ui::sameTensors(m_snapshot.tensors, m_snapshot.tensors));
        QVERIFY(ui::sameTensors(m_snapshot.tensors, moved.tensors));
        ui::ModelSnapshot renamed = m_snapshot;
        renamed.tensors[1].name += u'x';
        QVERIFY(!ui::sameTensors(m_snapshot.tensors, renamed.tensors));
        ui::ModelSnapshot resized = m_snapshot;
        resized.tensors[1].bytes += 1;
        QVERIFY(!ui::sameTensors(m_snapshot.tensors, resized.tensors));
        ui::ModelSnapshot fewer = m_snapshot;
        fewer.tensors.removeLast();
        QVERIFY(!ui::sameTensors(m_snapshot.tensors, fewer.tensors));
    }

    void storageUpdatesInPlaceKeepSortAndSelection()
    {
        TensorTableModel tensors;
        QAbstractItemModelTester tensorTester(
            &tensors, QAbstractItemModelTester::FailureReportingMode::QtTest);
        TensorFilterProxy proxy;
        proxy.setSourceModel(&tensors);
        QAbstractItemModelTester proxyTester(
            &proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        tensors.setSnapshot(m_snapshot);
        proxy.sort(TensorTableModel::Size, Qt::DescendingOrder);
        QItemSelectionModel selection(&proxy);
        selection.select(
            proxy.index(1, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
        const QPersistentModelIndex selected = selection.selectedRows().first();
        QList<int> order;
        for (int r = 0; r < proxy.rowCount(); ++r)
            order << proxy.index(r, 0).data(TensorTableModel::TensorIndexRole).toInt();

        // What a save of every tensor into one file would change.
        ui::ModelSnapshot saved = m_snapshot;
        for (qsizetype i = 0; i < saved.tensors.size(); ++i) {
            saved.tensors[i].external = true;
            saved.tensors[i].storage = QStringLiteral("model.onnx.data");
            saved.tensors[i].offset = 4096 * quint64(i);
        }
        QSignalSpy reset(&tensors, &QAbstractItemModel::modelReset);
        QSignalSpy changed(&tensors, &QAbstractItemModel::dataChanged);
        tensors.updateStorage(saved);
        QCOMPARE(reset.count(), 0);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.first().at(0).value<QModelIndex>(),
            tensors.index(0, TensorTableModel::Storage));
        QCOMPARE(changed.first().at(1).value<QModelIndex>(),
            tensors.index(tensors.rowCount() - 1, TensorTableModel::Status));
        for (int r = 0; r < proxy.rowCount(); ++r) {
            QCOMPARE(proxy.index(r, 0).data(TensorTableModel::TensorIndexRole).toInt(), order[r]);
            QCOMPARE(proxy.index(r, TensorTableModel::Storage).data().toString(),
                QStringLiteral("model.onnx.data"));
            QCOMPARE(proxy.index(r, 0).data(TensorTableModel::ExternalRole).toBool(), true);
        }
        QVERIFY(selected.isValid());
        QCOMPARE(selection.selectedRows(), QModelIndexList{QModelIndex(selected)});
        // The storage filter sees the new storage.
        proxy.setStorageFilter(TensorFilterProxy::StorageFilter::Inline);
        QCOMPARE(proxy.rowCount(), 0);
    }

    void storageFilter_data()
    {
        QTest::addColumn<int>("filter");
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("expected");
        const int all = int(m_built.size());
        const int external = int(std::count_if(
            m_built.begin(), m_built.end(), [](const auto& t) { return t.external; }));
        QTest::addRow("all") << int(TensorFilterProxy::StorageFilter::All) << QString() << all;
        QTest::addRow("inline") << int(TensorFilterProxy::StorageFilter::Inline) << QString()
                                << all - external;
        QTest::addRow("external") << int(TensorFilterProxy::StorageFilter::External) << QString()
                                  << external;
        QTest::addRow("with problems")
            << int(TensorFilterProxy::StorageFilter::WithProblems) << QString() << 0;
        QTest::addRow("text, any case")
            << int(TensorFilterProxy::StorageFilter::All) << QStringLiteral("EXT_") << external;
        QTest::addRow("text and storage")
            << int(TensorFilterProxy::StorageFilter::Inline) << QStringLiteral("ext") << 0;
        QTest::addRow("scope text")
            << int(TensorFilterProxy::StorageFilter::All) << QStringLiteral("GRAPH") << all;
    }

    void storageFilter()
    {
        QFETCH(int, filter);
        QFETCH(QString, text);
        QFETCH(int, expected);
        TensorTableModel tensors;
        tensors.setSnapshot(m_snapshot);
        TensorFilterProxy proxy;
        proxy.setSourceModel(&tensors);
        proxy.setStorageFilter(TensorFilterProxy::StorageFilter(filter));
        proxy.setText(text);
        QCOMPARE(proxy.rowCount(), expected);
    }

    void sortsSizesAsNumbers()
    {
        TensorTableModel tensors;
        tensors.setSnapshot(m_snapshot);
        TensorFilterProxy proxy;
        proxy.setSourceModel(&tensors);
        proxy.sort(TensorTableModel::Size, Qt::AscendingOrder);
        std::vector<uint64_t> expected;
        for (const auto& built : m_built)
            expected.push_back(built.bytes);
        std::sort(expected.begin(), expected.end());
        std::vector<uint64_t> shown;
        for (int r = 0; r < proxy.rowCount(); ++r)
            shown.push_back(proxy.index(r, TensorTableModel::Size)
                                .data(TensorTableModel::SortRole)
                                .toULongLong());
        QCOMPARE(shown, expected);
        // As text "16 B" would sort after "1.00 KiB": the display strings are not what is sorted.
        QVERIFY(expected.front() < 1024 && expected.back() >= 1024);
    }

    void textColumnsSortLikeQSortFilterProxyModel()
    {
        TensorTableModel tensors;
        tensors.setSnapshot(m_snapshot);
        TensorFilterProxy proxy;
        proxy.setSourceModel(&tensors);
        QSortFilterProxyModel reference;
        reference.setSourceModel(&tensors);
        reference.setSortRole(TensorTableModel::SortRole);
        const int columns[] = {TensorTableModel::Name, TensorTableModel::Scope,
            TensorTableModel::Kind, TensorTableModel::Dtype, TensorTableModel::Shape,
            TensorTableModel::Storage, TensorTableModel::Status};
        for (const int column : columns) {
            for (const Qt::SortOrder order : {Qt::AscendingOrder, Qt::DescendingOrder}) {
                proxy.sort(column, order);
                reference.sort(column, order);
                for (int r = 0; r < proxy.rowCount(); ++r)
                    QCOMPARE(proxy.mapToSource(proxy.index(r, 0)).row(),
                        reference.mapToSource(reference.index(r, 0)).row());
            }
        }
    }

    void problemsNameTheirTensor()
    {
        QTemporaryDir dir;
        QVERIFY(uifixtures::writeBrokenModel(dir.path(), "../escape.bin"));
        auto model = repack::Model::load(dir.filePath(QStringLiteral("broken.onnx")).toStdString());
        QVERIFY(model.ok());
        const ui::ModelSnapshot snapshot = ui::takeSnapshot(*model.value());
        ui::ProblemsModel problems;
        QAbstractItemModelTester tester(
            &problems, QAbstractItemModelTester::FailureReportingMode::QtTest);
        problems.setSnapshot(snapshot);
        QVERIFY(problems.rowCount() >= 1);
        QVERIFY(problems.errorCount() >= 1);
        const QModelIndex first = problems.index(0, ui::ProblemsModel::Tensor);
        QVERIFY(first.data().toString().endsWith(QStringLiteral("/w")));
        const int tensor = first.data(ui::ProblemsModel::TensorIndexRole).toInt();
        QCOMPARE(snapshot.tensors.at(tensor).name, QStringLiteral("w"));

        TensorTableModel tensors;
        tensors.setSnapshot(snapshot);
        TensorFilterProxy proxy;
        proxy.setSourceModel(&tensors);
        proxy.setStorageFilter(TensorFilterProxy::StorageFilter::WithProblems);
        QCOMPARE(proxy.rowCount(), 1);
        QCOMPARE(proxy.index(0, TensorTableModel::Name).data().toString(), QStringLiteral("w"));
        QVERIFY(proxy.index(0, TensorTableModel::Status).data().toString() != QStringLiteral("ok"));
        // The Status column cuts the code short: its tooltip gives the code and the message.
        const QString tip
            = proxy.index(0, TensorTableModel::Status).data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.startsWith(snapshot.problems.at(0).code + QStringLiteral(": "))
                && tip.contains(snapshot.problems.at(0).message),
            qPrintable(tip));
    }
};

QTEST_MAIN(TestTensorModels)
#include "tst_tensor_models.moc"
