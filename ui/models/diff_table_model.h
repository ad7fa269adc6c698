// The compare window's table: one row per tensor of either model (LayoutDiff::tensors, in the
// core's diff order), with where it is in A and in B and what changed; and the proxy that
// filters it by kind of change. Columns and roles in the manner of TensorTableModel.
#pragma once

#include "layout_diff.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include <memory>

namespace ui {

class DiffTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns {
        Tensor,
        AStorage,
        AOffset,
        ABytes,
        BStorage,
        BOffset,
        BBytes,
        Change,
        ColumnCount
    };
    enum Roles {
        SortRole = Qt::UserRole, // numbers for offsets and sizes, text otherwise
        KindRole, // int(ChangeKind)
        DiffIndexRole, // index into LayoutDiff::tensors (the source row)
        PendingRole, // bool: bytes not compared yet
    };

    explicit DiffTableModel(QObject* parent = nullptr);

    // Replaces every row (a model reset).
    void setDiff(std::shared_ptr<const LayoutDiff> diff);
    // The same tensors with new kinds (the byte comparison finished): `changed` rows update in
    // place, so selection, sort and scroll position stay.
    void updateKinds(std::shared_ptr<const LayoutDiff> diff, const std::vector<int>& changed);
    const LayoutDiff* diff() const { return m_diff.get(); }
    const DiffTensor& tensor(int row) const { return m_diff->tensors[size_t(row)]; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(
        int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const LayoutDiff> m_diff;
};

// The change column's words for a tensor: "moved", "storage changed (to inline)", ...
QString changeText(const DiffTensor& tensor);

// Hides the rows whose kind of change is switched off.
class DiffKindFilter : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit DiffKindFilter(QObject* parent = nullptr);

    void setSourceModel(QAbstractItemModel* source) override;
    void setKindVisible(ChangeKind kind, bool visible);
    bool isKindVisible(ChangeKind kind) const { return m_visible & (1u << int(kind)); }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    const DiffTableModel* m_diff = nullptr;
    unsigned m_visible = ~0u;
};

} // namespace ui
