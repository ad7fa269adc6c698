#include "diff_table_model.h"

#include "ui/util/byte_format.h"

#include <algorithm>

namespace ui {
namespace {

QVariant placeText(const DiffPlace& place, int column)
{
    if (place.row < 0)
        return QStringLiteral("—");
    switch (column) {
    case 0:
        return place.storage;
    case 1:
        return place.external ? QVariant(QString::number(place.offset)) : QVariant(QString());
    default:
        return formatBytes(place.length);
    }
}

QVariant placeSort(const DiffPlace& place, int column)
{
    switch (column) {
    case 0:
        return place.row < 0 ? QString() : place.storage;
    case 1:
        return place.external ? qulonglong(place.offset) : qulonglong(0);
    default:
        return qulonglong(place.row < 0 ? 0 : place.length);
    }
}

} // namespace

QString changeText(const DiffTensor& tensor)
{
    QString text;
    switch (tensor.kind) {
    case ChangeKind::ToInline:
    case ChangeKind::ToExternal:
        text = DiffTableModel::tr("storage changed (%1)").arg(changeKindName(tensor.kind));
        break;
    default:
        text = changeKindName(tensor.kind);
    }
    if (tensor.contentPending)
        text += DiffTableModel::tr(", comparing bytes…");
    return text;
}

DiffTableModel::DiffTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void DiffTableModel::setDiff(std::shared_ptr<const LayoutDiff> diff)
{
    beginResetModel();
    m_diff = std::move(diff);
    endResetModel();
}

void DiffTableModel::updateKinds(
    std::shared_ptr<const LayoutDiff> diff, const std::vector<int>& changed)
{
    if (!m_diff || !diff || diff->tensors.size() != m_diff->tensors.size()) {
        setDiff(std::move(diff));
        return;
    }
    m_diff = std::move(diff);
    if (changed.empty())
        return;
    const auto [first, last] = std::minmax_element(changed.begin(), changed.end());
    Q_EMIT dataChanged(index(*first, 0), index(*last, ColumnCount - 1));
}

int DiffTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_diff ? 0 : int(m_diff->tensors.size());
}

int DiffTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant DiffTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || !m_diff || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const DiffTensor& t = m_diff->tensors[size_t(index.row())];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case Tensor:
            return t.name;
        case AStorage:
        case AOffset:
        case ABytes:
            return placeText(t.before, column - AStorage);
        case BStorage:
        case BOffset:
        case BBytes:
            return placeText(t.after, column - BStorage);
        case Change:
            return changeText(t);
        }
        break;
    case SortRole:
        switch (column) {
        case Tensor:
            return t.name;
        case AStorage:
        case AOffset:
        case ABytes:
            return placeSort(t.before, column - AStorage);
        case BStorage:
        case BOffset:
        case BBytes:
            return placeSort(t.after, column - BStorage);
        case Change:
            return int(t.kind);
        }
        break;
    case Qt::ToolTipRole:
        if (column == Tensor)
            return QString(t.scope + u'/' + t.name);
        if (column == Change)
            return changeText(t);
        break;
    case Qt::TextAlignmentRole:
        if (column == AOffset || column == ABytes || column == BOffset || column == BBytes)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case KindRole:
        return int(t.kind);
    case DiffIndexRole:
        return index.row();
    case PendingRole:
        return t.contentPending;
    }
    return {};
}

QVariant DiffTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case Tensor:
            return tr("Tensor");
        case AStorage:
            return tr("A storage");
        case AOffset:
            return tr("A offset");
        case ABytes:
            return tr("A bytes");
        case BStorage:
            return tr("B storage");
        case BOffset:
            return tr("B offset");
        case BBytes:
            return tr("B bytes");
        case Change:
            return tr("Change");
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Tensor:
            return tr("Tensor name; tensors are matched by scope and name");
        case AStorage:
        case BStorage:
            return tr("Inline in the .onnx, or the data file holding the tensor");
        case AOffset:
        case BOffset:
            return tr("Byte offset in the data file");
        case ABytes:
        case BBytes:
            return tr("Bytes of the tensor's data");
        case Change:
            return tr("Added, removed, moved, storage changed, content changed (compared by "
                      "bytes) or unchanged");
        }
    }
    return {};
}

DiffKindFilter::DiffKindFilter(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(DiffTableModel::SortRole);
}

void DiffKindFilter::setSourceModel(QAbstractItemModel* source)
{
    m_diff = qobject_cast<const DiffTableModel*>(source);
    QSortFilterProxyModel::setSourceModel(source);
}

void DiffKindFilter::setKindVisible(ChangeKind kind, bool visible)
{
    const unsigned bit = 1u << int(kind);
    const unsigned next = visible ? (m_visible | bit) : (m_visible & ~bit);
    if (next == m_visible)
        return;
    m_visible = next;
    invalidateRowsFilter();
}

bool DiffKindFilter::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    if (!m_diff || sourceParent.isValid())
        return true;
    return isKindVisible(m_diff->tensor(sourceRow).kind);
}

} // namespace ui
