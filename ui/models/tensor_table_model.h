// One row per tensor of the open model, read from a snapshot (never from repack::Model itself,
// which a save rewrites). Columns and roles in the manner of KDAB hotspot's table models. Rows
// drag as a list of tensor indices (kMimeType); the Planned column shows where the next save
// puts each tensor: a pin's destination ("* inline"), and when the threshold rule places the
// tensors that are not pinned, the rule's ("weights.bin"), read from the save's plan.
#pragma once

#include "model_snapshot.h"

#include <QAbstractTableModel>

#include <memory>

namespace repack {
struct SavePlan;
}

namespace ui {

class PlacementState;

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
        Planned,
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
        PinnedRole, // bool: the placement plan pins this tensor
    };
    // Dragged rows: the model's path and the tensor indices (QDataStream).
    static constexpr const char* kMimeType = "application/x-onnx-repack-tensors";

    explicit TensorTableModel(QObject* parent = nullptr);

    // Replaces every row (a model reset: selections and sort are re-applied by the proxy).
    void setSnapshot(const ModelSnapshot& snapshot);
    // For a snapshot of the same tensors (sameTensors(), e.g. after a save, which changes only
    // where they are stored): the Storage to Status cells change in place (dataChanged; the row
    // roles ExternalRole and ProblemCountRole change with them), so selection, scroll position
    // and a sort by another column stay, without re-sorting 100,000 rows.
    void updateStorage(const ModelSnapshot& snapshot);
    const TensorRow& row(int index) const { return m_rows[index]; }
    // Where the Planned column reads pins; its changes update that column of the rows changed.
    void setPlacementState(const PlacementState* state);
    // The plan of the next save when the threshold rule places the tensors not pinned (the one
    // the preview made, parallel to the rows); null when they keep their place (Planned then
    // shows pins only). A new snapshot drops it.
    void setRulePlan(std::shared_ptr<const repack::SavePlan> plan);

    // The tensor indices dragged in `mime` from a table of the model at `modelPath`; empty when
    // `mime` carries none or another model's.
    static QList<int> tensorsFromMime(const QMimeData* mime, const QString& modelPath);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(
        int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    // What column `section` shows, and in which units (the header's tooltip).
    static QString headerToolTip(int section);
    QStringList mimeTypes() const override;
    QMimeData* mimeData(const QModelIndexList& indexes) const override;
    Qt::DropActions supportedDragActions() const override { return Qt::CopyAction; }

private:
    QVariant display(const TensorRow& row, int column) const;
    QString planned(int tensor) const;
    // Where the rule plan puts `tensor` ("inline" or the data file); empty without one.
    QString ruled(int tensor) const;
    void onPinsChanged(const QList<int>& tensors);
    // The Planned cells of `tensors` changed `roles`.
    void plannedChanged(const QList<int>& tensors, const QList<int>& roles);

    QList<TensorRow> m_rows;
    QString m_path;
    const PlacementState* m_placement = nullptr;
    std::shared_ptr<const repack::SavePlan> m_rulePlan;
    uint64_t m_totalBytes = 0;
    uint64_t m_largest = 0;
};

} // namespace ui
