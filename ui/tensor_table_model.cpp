#include "tensor_table_model.h"

#include "byte_format.h"

#include <QBrush>
#include <QColor>

namespace ui {

TensorTableModel::TensorTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void TensorTableModel::setSnapshot(const ModelSnapshot& snapshot)
{
    beginResetModel();
    m_rows = snapshot.tensors;
    m_totalBytes = snapshot.inlineBytes + snapshot.externalBytes;
    m_largest = snapshot.largestTensor;
    endResetModel();
}

void TensorTableModel::updateStorage(const ModelSnapshot& snapshot)
{
    static_assert(
        Storage < Offset && Offset < Length && Length < Status && Status == ColumnCount - 1,
        "the columns a save changes are the last ones");
    Q_ASSERT(snapshot.tensors.size() == m_rows.size());
    m_rows = snapshot.tensors;
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, Storage), index(rowCount() - 1, Status));
}

int TensorTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int TensorTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TensorTableModel::display(const TensorRow& row, int column) const
{
    switch (column) {
    case Name:
        return row.name;
    case Scope:
        return row.scope;
    case Kind:
        return row.kind;
    case Dtype:
        return row.dtype;
    case Shape:
        return row.shape;
    case Size:
        return formatBytes(row.bytes);
    case Storage:
        return row.storage;
    case Offset:
        return row.external ? QVariant(QString::number(row.offset)) : QVariant();
    case Length:
        return row.external ? QVariant(QString::number(row.length)) : QVariant();
    case Status:
        return row.status;
    }
    return {};
}

QVariant TensorTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const TensorRow& row = m_rows[index.row()];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        return display(row, column);
    case Qt::ToolTipRole:
        if (column == Size)
            return QStringLiteral("%1 bytes").arg(row.bytes);
        if (column == Name || column == Scope)
            return QString(row.scope + u'/' + row.name);
        return {};
    case Qt::TextAlignmentRole:
        if (column == Size || column == Offset || column == Length)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ForegroundRole:
        if (column == Status && row.problemCount > 0)
            return QBrush(row.hasError ? QColor(0xc0, 0x1c, 0x28) : QColor(0xb5, 0x83, 0x5a));
        return {};
    case SortRole:
        switch (column) {
        case Size:
            return QVariant::fromValue<qulonglong>(row.bytes);
        case Offset:
            return QVariant::fromValue<qulonglong>(row.external ? row.offset : 0);
        case Length:
            return QVariant::fromValue<qulonglong>(row.external ? row.length : 0);
        default:
            return display(row, column);
        }
    case TotalRole:
        return QVariant::fromValue<qulonglong>(m_totalBytes);
    case MaxRole:
        return QVariant::fromValue<qulonglong>(m_largest);
    case TensorIndexRole:
        return index.row();
    case ExternalRole:
        return row.external;
    case ProblemCountRole:
        return row.problemCount;
    }
    return {};
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0
        || section >= ColumnCount)
        return {};
    static const char* const kTitles[ColumnCount] = {
        QT_TR_NOOP("Name"),
        QT_TR_NOOP("Scope"),
        QT_TR_NOOP("Kind"),
        QT_TR_NOOP("Type"),
        QT_TR_NOOP("Shape"),
        QT_TR_NOOP("Size"),
        QT_TR_NOOP("Storage"),
        QT_TR_NOOP("Offset"),
        QT_TR_NOOP("Length"),
        QT_TR_NOOP("Status"),
    };
    return tr(kTitles[section]);
}

} // namespace ui
