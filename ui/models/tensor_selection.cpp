#include "tensor_selection.h"

#include <QAbstractProxyModel>
#include <QHelpEvent>
#include <QToolTip>

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

void SelectionHighlight::follow(QItemSelectionModel* selection, QAbstractProxyModel* proxy,
    QObject* receiver, std::function<void()> repaint)
{
    m_selection.set(selection, proxy, receiver, [this, repaint = std::move(repaint)] {
        m_dirty = true;
        if (repaint)
            repaint();
    });
    m_dirty = true;
}

void SelectionHighlight::setTensorCount(size_t count)
{
    m_count = count;
    m_dirty = true;
}

void SelectionHighlight::refresh() const
{
    if (!m_dirty)
        return;
    m_dirty = false;
    m_flags.assign(m_count, 0);
    m_list.clear();
    for (int tensor : m_selection.tensors()) {
        if (size_t(tensor) < m_count) {
            m_flags[size_t(tensor)] = 1;
            m_list.push_back(tensor);
        }
    }
}

bool SelectionHighlight::isHighlighted(int tensor) const
{
    refresh();
    return tensor >= 0 && size_t(tensor) < m_flags.size() && m_flags[size_t(tensor)];
}

const std::vector<int>& SelectionHighlight::highlighted() const
{
    refresh();
    return m_list;
}

bool SelectionHighlight::click(int tensor, Qt::KeyboardModifiers modifiers) const
{
    if (!m_selection.isValid())
        return false;
    const auto flags = (modifiers & Qt::ControlModifier) ? QItemSelectionModel::Toggle
                                                         : QItemSelectionModel::ClearAndSelect;
    return m_selection.select(tensor, flags);
}

bool showToolTip(QEvent* event, QWidget* viewport, const std::function<QString(QPoint)>& textAt)
{
    if (event->type() != QEvent::ToolTip)
        return false;
    auto* help = static_cast<QHelpEvent*>(event);
    const QString text = textAt(help->pos());
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(help->globalPos(), text, viewport);
    return true;
}

} // namespace ui
