#include "tensor_filter_proxy.h"

#include "tensor_table_model.h"

namespace ui {

TensorFilterProxy::TensorFilterProxy(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(TensorTableModel::SortRole);
}

void TensorFilterProxy::setSourceModel(QAbstractItemModel* source)
{
    m_tensors = qobject_cast<const TensorTableModel*>(source);
    QSortFilterProxyModel::setSourceModel(source);
}

void TensorFilterProxy::setText(const QString& text)
{
    if (text == m_text)
        return;
    m_text = text;
    invalidateRowsFilter();
}

void TensorFilterProxy::setStorageFilter(StorageFilter filter)
{
    if (filter == m_storage)
        return;
    m_storage = filter;
    invalidateRowsFilter();
}

bool TensorFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    if (!m_tensors || sourceParent.isValid())
        return true;
    const TensorRow& row = m_tensors->row(sourceRow);
    switch (m_storage) {
    case StorageFilter::All:
        break;
    case StorageFilter::Inline:
        if (row.external)
            return false;
        break;
    case StorageFilter::External:
        if (!row.external)
            return false;
        break;
    case StorageFilter::WithProblems:
        if (row.problemCount == 0)
            return false;
        break;
    }
    return m_text.isEmpty() || row.name.contains(m_text, Qt::CaseInsensitive)
        || row.scope.contains(m_text, Qt::CaseInsensitive);
}

bool TensorFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const
{
    if (!m_tensors)
        return QSortFilterProxyModel::lessThan(left, right);
    // Read the rows directly: building QVariants for every comparison makes sorting 100,000
    // rows visibly slow.
    const TensorRow& a = m_tensors->row(left.row());
    const TensorRow& b = m_tensors->row(right.row());
    auto byNumber
        = [&](uint64_t x, uint64_t y) { return x != y ? x < y : left.row() < right.row(); };
    // What QSortFilterProxyModel does with the display strings, without the QVariants.
    auto byText = [&](const QString& x, const QString& y) {
        return x.compare(y, sortCaseSensitivity()) < 0;
    };
    switch (left.column()) {
    case TensorTableModel::Size:
        return byNumber(a.bytes, b.bytes);
    case TensorTableModel::Offset:
        return byNumber(a.external ? a.offset : 0, b.external ? b.offset : 0);
    case TensorTableModel::Length:
        return byNumber(a.external ? a.length : 0, b.external ? b.length : 0);
    default:
        break;
    }
    if (isSortLocaleAware())
        return QSortFilterProxyModel::lessThan(left, right);
    switch (left.column()) {
    case TensorTableModel::Name:
        return byText(a.name, b.name);
    case TensorTableModel::Scope:
        return byText(a.scope, b.scope);
    case TensorTableModel::Kind:
        return byText(a.kind, b.kind);
    case TensorTableModel::Dtype:
        return byText(a.dtype, b.dtype);
    case TensorTableModel::Shape:
        return byText(a.shape, b.shape);
    case TensorTableModel::Storage:
        return byText(a.storage, b.storage);
    case TensorTableModel::Status:
        return byText(a.status, b.status);
    default:
        break;
    }
    return QSortFilterProxyModel::lessThan(left, right);
}

} // namespace ui
