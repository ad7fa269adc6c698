// MainWindow: which tensors are selected in the table, from any view (the map, the placement
// view, undo and redo), and copying their names.
#include "main_window.h"

#include "ui/models/tensor_filter_proxy.h"
#include "ui/models/tensor_table_model.h"

#include <QClipboard>
#include <QComboBox>
#include <QGuiApplication>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QTableView>
#include <QTimer>

#include <algorithm>

namespace ui {

void MainWindow::clearFilters()
{
    m_filter->clear();
    m_filterTimer->stop();
    m_storageFilter->setCurrentIndex(0);
    // Set on the proxy too: the widgets may already show "no filter" while tests set it directly.
    m_proxy->setText({});
    m_proxy->setStorageFilter(TensorFilterProxy::StorageFilter::All);
}

void MainWindow::selectTensor(int tensor)
{
    const QModelIndex row = m_proxy->mapFromSource(m_tensorModel->index(tensor, 0));
    if (!row.isValid())
        return;
    m_table->selectionModel()->setCurrentIndex(
        row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_table->scrollTo(row);
}

void MainWindow::selectTensors(const QList<int>& tensors)
{
    if (tensors.isEmpty())
        return;
    // One filtered out: show every row again.
    if (std::any_of(tensors.begin(), tensors.end(), [this](int tensor) {
            return !m_proxy->mapFromSource(m_tensorModel->index(tensor, 0)).isValid();
        }))
        clearFilters();
    QItemSelection selection;
    QModelIndex first;
    for (int tensor : tensors) {
        const QModelIndex row = m_proxy->mapFromSource(m_tensorModel->index(tensor, 0));
        if (!row.isValid())
            continue;
        selection.select(row, row);
        if (!first.isValid() || row.row() < first.row())
            first = row;
    }
    if (!first.isValid())
        return;
    QItemSelectionModel* model = m_table->selectionModel();
    model->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    model->setCurrentIndex(first, QItemSelectionModel::NoUpdate);
    m_table->scrollTo(first);
}

QString MainWindow::selectedNames() const
{
    QModelIndexList rows = m_table->selectionModel()->selectedRows(TensorTableModel::Name);
    std::sort(rows.begin(), rows.end(),
        [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
    QStringList names;
    names.reserve(rows.size());
    for (const QModelIndex& row : rows)
        names << row.data().toString();
    return names.join(u'\n');
}

void MainWindow::copyNames()
{
    const QString names = selectedNames();
    if (!names.isEmpty())
        QGuiApplication::clipboard()->setText(names);
}

} // namespace ui
