// One row per tensor of the open model, read from a snapshot (never from repack::Model itself,
// which a save rewrites). Columns and roles in the manner of KDAB hotspot's table models.
#pragma once

#include "model_snapshot.h"

#include <QAbstractTableModel>

namespace ui {

class TensorTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns { Name, Scope, Kind, Dtype, Shape, Size, Storage, Offset, Length, Status, ColumnCount };
    enum Roles {
        SortRole = Qt::UserRole, // numbers for sizes and offsets, text otherwise
        TotalRole,               // bytes of all tensors, for the size share
        MaxRole,                 // bytes of the largest tensor, the full width of a size bar
        TensorIndexRole,         // index into Model::tensors() and the snapshot
        ExternalRole,            // bool: stored in a data file
        ProblemCountRole,        // int: problems naming this tensor
    };

    explicit TensorTableModel(QObject* parent = nullptr);

    // Replaces every row (a model reset: selections and sort are re-applied by the proxy).
    void setSnapshot(const ModelSnapshot& snapshot);
    const TensorRow& row(int index) const { return m_rows[index]; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant display(const TensorRow& row, int column) const;

    QList<TensorRow> m_rows;
    uint64_t m_totalBytes = 0;
    uint64_t m_largest = 0;
};

} // namespace ui
