// Every validation problem of the open model, one row each.
#pragma once

#include "model_snapshot.h"

#include <QAbstractTableModel>

namespace ui {

class ProblemsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns { Severity, Tensor, Code, Message, ColumnCount };
    enum Roles {
        SortRole = Qt::UserRole,
        TensorIndexRole, // the tensor's row in the tensor table model, -1 for model-wide problems
        IsErrorRole,
    };

    explicit ProblemsModel(QObject* parent = nullptr);

    void setSnapshot(const ModelSnapshot& snapshot);
    int errorCount() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(
        int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QList<ProblemRow> m_rows;
};

} // namespace ui
