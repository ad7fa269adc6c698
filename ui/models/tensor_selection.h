// One selection, many views, as qdirstat's SelectionModel keeps its list and treemap in step:
// the tensor table's QItemSelectionModel is the single source of truth, and every view that
// draws tensors (the layout map, the diff views, the Placement pane) reads and changes it
// through a TensorSelection, which translates between the selection's rows (of a proxy, or of
// its own model) and tensor indices (source rows) on demand, never keeping a copy.
#pragma once

#include <QAbstractProxyModel>
#include <QItemSelectionModel>
#include <QPointer>

#include <functional>
#include <vector>

namespace ui {

class TensorSelection {
public:
    // `proxy` null: the selection's rows are tensor indices. `changed` (if any) is called (on
    // `receiver`) whenever the selected tensors may read differently: another selection or
    // model, a reset, a re-sort or re-filter. Earlier connections made here are dropped.
    void set(QItemSelectionModel* selection, QAbstractProxyModel* proxy, QObject* receiver,
        std::function<void()> changed);

    bool isValid() const { return m_selection && m_selection->model(); }
    QItemSelectionModel* selectionModel() const { return m_selection; }
    QAbstractProxyModel* proxy() const { return m_proxy; }
    // The tensors of the selected rows, each once, in selection order.
    std::vector<int> tensors() const;
    // `tensor`'s row in the selection's model; invalid when the proxy hides it.
    QModelIndex rowOf(int tensor) const;
    // Makes `tensor`'s row current with `flags` (whole rows); false when it is hidden.
    bool select(int tensor, QItemSelectionModel::SelectionFlags flags) const;

private:
    QPointer<QItemSelectionModel> m_selection;
    QPointer<QAbstractProxyModel> m_proxy;
    QList<QMetaObject::Connection> m_connections;
};

// The selection as a view that draws tensors paints and clicks it (the layout map, the diff
// view): which tensors are highlighted, a flag per tensor and their list, rebuilt only after
// the selection changed; and what a click on a tensor does to the selection.
class SelectionHighlight {
public:
    // Follows `selection` (rows of `proxy`, or tensor indices); `repaint` is called on
    // `receiver` when the highlight may have changed.
    void follow(QItemSelectionModel* selection, QAbstractProxyModel* proxy, QObject* receiver,
        std::function<void()> repaint);
    // The view shows `count` tensors now (a new model or diff).
    void setTensorCount(size_t count);

    const TensorSelection& selection() const { return m_selection; }
    bool isHighlighted(int tensor) const;
    // The highlighted tensors, in selection order.
    const std::vector<int>& highlighted() const;

    // A click on `tensor`: Ctrl toggles it, otherwise it becomes the selection; false when the
    // table's filter hides its row (or nothing is followed).
    bool click(int tensor, Qt::KeyboardModifiers modifiers) const;

private:
    void refresh() const;

    TensorSelection m_selection;
    size_t m_count = 0;
    mutable bool m_dirty = true;
    mutable std::vector<char> m_flags;
    mutable std::vector<int> m_list;
};

// A view's tooltip: for a QEvent::ToolTip on `viewport`, shows textAt(position) there (hides
// any tooltip for an empty text) and returns true; false for any other event.
bool showToolTip(QEvent* event, QWidget* viewport, const std::function<QString(QPoint)>& textAt);

} // namespace ui
