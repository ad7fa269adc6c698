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

} // namespace ui
