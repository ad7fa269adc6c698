// One row per tensor of the open model, read from a snapshot (never from repack::Model itself,
// which a save rewrites). Columns and roles in the manner of KDAB hotspot's table models.
#pragma once

#include "model_snapshot.h"

#include <QAbstractTableModel>

namespace ui {

class TensorTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns {
        Name,
        Scope,
        Kind,
        Dtype,
        Shape,
        Size,
        Storage,
        Offset,
        Length,
        Status,
        ColumnCount
    };
    enum Roles {
        SortRole = Qt::UserRole, // numbers for sizes and offsets, text otherwise
        TotalRole, // bytes of all tensors, for the size share
        MaxRole, // bytes of the largest tensor, the full width of a size bar
        TensorIndexRole, // index into Model::tensors() and the snapshot
        ExternalRole, // bool: stored in a data file
        ProblemCountRole, // int: problems naming this tensor
    };

    explicit TensorTableModel(QObject* parent = nullptr);

    // Replaces every row (a model reset: selections and sort are re-applied by the proxy).
    void setSnapshot(const ModelSnapshot& snapshot);
    // For a snapshot of the same tensors (sameTensors(), e.g. after a save, which changes only
    // where they are stored): the Storage to Status cells change in place (dataChanged; the row
    // roles ExternalRole and ProblemCountRole change with them), so selection, scroll position
    // and a sort by another column stay, without re-sorting 100,000 rows.
    void updateStorage(const ModelSnapshot& snapshot);
    const TensorRow& row(int index) const { return m_rows[index]; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(
        int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant display(const TensorRow& row, int column) const;

    QList<TensorRow> m_rows;
    uint64_t m_totalBytes = 0;
    uint64_t m_largest = 0;
};

} // namespace ui
