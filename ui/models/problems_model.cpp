#include "problems_model.h"

#include <QApplication>
#include <QIcon>
#include <QStyle>

#include <algorithm>

namespace ui {

ProblemsModel::ProblemsModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void ProblemsModel::setSnapshot(const ModelSnapshot& snapshot)
{
    beginResetModel();
    m_rows = snapshot.problems;
    endResetModel();
}

int ProblemsModel::errorCount() const
{
    return int(
        std::count_if(m_rows.cbegin(), m_rows.cend(), [](const ProblemRow& p) { return p.error; }));
}

int ProblemsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ProblemsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ProblemsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ProblemRow& row = m_rows[index.row()];
    switch (role) {
    case Qt::DisplayRole:
    case SortRole:
        switch (index.column()) {
        case Severity:
            return row.error ? tr("error") : tr("warning");
        case Tensor:
            return row.tensor.isEmpty() ? tr("(model)") : row.tensor;
        case Code:
            return row.code;
        case Message:
            return row.message;
        }
        return {};
    case Qt::ToolTipRole:
        return index.column() == Message ? QVariant(row.message) : QVariant();
    case Qt::DecorationRole:
        if (index.column() != Severity
            || !qobject_cast<QApplication*>(QCoreApplication::instance()))
            return {};
        return QApplication::style()->standardIcon(
            row.error ? QStyle::SP_MessageBoxCritical : QStyle::SP_MessageBoxWarning);
    case TensorIndexRole:
        return row.tensorIndex;
    case IsErrorRole:
        return row.error;
    }
    return {};
}

QVariant ProblemsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Severity:
        return tr("Severity");
    case Tensor:
        return tr("Tensor");
    case Code:
        return tr("Code");
    case Message:
        return tr("Message");
    }
    return {};
}

} // namespace ui
