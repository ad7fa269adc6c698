#include "tensor_selection.h"

#include <QAbstractProxyModel>

#include <unordered_set>

namespace ui {

void TensorSelection::set(QItemSelectionModel* selection, QAbstractProxyModel* proxy,
    QObject* receiver, std::function<void()> changed)
{
    for (const QMetaObject::Connection& connection : std::as_const(m_connections))
        QObject::disconnect(connection);
    m_connections.clear();
    m_selection = selection;
    m_proxy = proxy;
    if (!selection || !changed)
        return;
    m_connections << QObject::connect(
        selection, &QItemSelectionModel::selectionChanged, receiver, changed);
    m_connections << QObject::connect(
        selection, &QItemSelectionModel::modelChanged, receiver, changed);
    if (QAbstractItemModel* rows = selection->model()) {
        m_connections << QObject::connect(rows, &QAbstractItemModel::modelReset, receiver, changed);
        m_connections << QObject::connect(
            rows, &QAbstractItemModel::layoutChanged, receiver, changed);
    }
}

std::vector<int> TensorSelection::tensors() const
{
    std::vector<int> tensors;
    if (!isValid())
        return tensors;
    std::unordered_set<int> seen;
    for (const QItemSelectionRange& range : m_selection->selection()) {
        for (int row = range.top(); row <= range.bottom(); ++row) {
            const QModelIndex index = range.model()->index(row, 0, range.parent());
            const int tensor = m_proxy ? m_proxy->mapToSource(index).row() : index.row();
            if (tensor >= 0 && seen.insert(tensor).second)
                tensors.push_back(tensor);
        }
    }
    return tensors;
}

QModelIndex TensorSelection::rowOf(int tensor) const
{
    if (!isValid())
        return {};
    return m_proxy ? m_proxy->mapFromSource(m_proxy->sourceModel()->index(tensor, 0))
                   : m_selection->model()->index(tensor, 0);
}

bool TensorSelection::select(int tensor, QItemSelectionModel::SelectionFlags flags) const
{
    const QModelIndex row = rowOf(tensor);
    if (!row.isValid())
        return false;
    m_selection->setCurrentIndex(row, flags | QItemSelectionModel::Rows);
    return true;
}

} // namespace ui
