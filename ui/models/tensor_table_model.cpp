#include "tensor_table_model.h"

#include "placement_state.h"
#include "ui/util/byte_format.h"

#include "core/plan/save_plan.h"

#include <QBrush>
#include <QColor>
#include <QDataStream>
#include <QIODevice>
#include <QMimeData>
#include <QSet>

#include <algorithm>

namespace ui {

TensorTableModel::TensorTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void TensorTableModel::setSnapshot(const ModelSnapshot& snapshot)
{
    beginResetModel();
    m_rulePlan.reset();
    m_rows = snapshot.tensors;
    m_path = snapshot.path;
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
    m_path = snapshot.path;
    m_rulePlan.reset(); // of the layout before
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, Storage), index(rowCount() - 1, Status));
}

void TensorTableModel::setPlacementState(const PlacementState* state)
{
    if (m_placement)
        disconnect(m_placement, nullptr, this, nullptr);
    m_placement = state;
    if (state)
        connect(state, &PlacementState::pinsChanged, this, &TensorTableModel::onPinsChanged);
}

void TensorTableModel::onPinsChanged(const QList<int>& tensors)
{
    plannedChanged(tensors, {Qt::DisplayRole, Qt::ToolTipRole, SortRole, PinnedRole});
}

void TensorTableModel::plannedChanged(const QList<int>& tensors, const QList<int>& roles)
{
    // One dataChanged per run of consecutive rows: a drop of 10,000 scattered rows must not
    // make the proxy re-filter all 100,000.
    QList<int> rows = tensors;
    std::sort(rows.begin(), rows.end());
    for (qsizetype i = 0; i < rows.size();) {
        qsizetype j = i;
        while (j + 1 < rows.size() && rows[j + 1] <= rows[j] + 1)
            ++j;
        if (rows[i] >= 0 && rows[j] < rowCount())
            Q_EMIT dataChanged(index(rows[i], Planned), index(rows[j], Planned), roles);
        i = j + 1;
    }
}

namespace {

// Where `plan` puts tensor `i`: null without a plan, an empty name inline, else its data file.
const std::string* ruledFile(const repack::SavePlan* plan, size_t i)
{
    static const std::string kInline;
    if (!plan || i >= plan->tensors.size())
        return nullptr;
    const repack::PlannedTensor& place = plan->tensors[i];
    if (!place.external)
        return &kInline;
    return place.file >= 0 && size_t(place.file) < plan->files.size()
        ? &plan->files[size_t(place.file)]
        : nullptr;
}

} // namespace

void TensorTableModel::setRulePlan(std::shared_ptr<const repack::SavePlan> plan)
{
    if (plan && plan->tensors.size() != size_t(m_rows.size()))
        plan.reset(); // of other rows
    if (!plan && !m_rulePlan)
        return;
    // Only the rows whose destination changed: a new threshold moves some tensors, and the proxy
    // re-filters every row it is told of.
    QList<int> changed;
    for (int i = 0; i < rowCount(); ++i) {
        const std::string* before = ruledFile(m_rulePlan.get(), size_t(i));
        const std::string* after = ruledFile(plan.get(), size_t(i));
        if (!before != !after || (before && *before != *after))
            changed << i;
    }
    m_rulePlan = std::move(plan);
    plannedChanged(changed, {Qt::DisplayRole, Qt::ToolTipRole, SortRole});
}

QString TensorTableModel::ruled(int tensor) const
{
    const std::string* file = ruledFile(m_rulePlan.get(), size_t(tensor));
    if (!file)
        return {};
    return file->empty() ? tr("inline") : QString::fromStdString(*file);
}

QString TensorTableModel::planned(int tensor) const
{
    if (!m_placement || !m_placement->isPinned(tensor))
        return ruled(tensor);
    // "*", not an emoji: it shows in every font.
    return QStringLiteral("* ") + PlacementState::describe(m_placement->pin(tensor));
}

Qt::ItemFlags TensorTableModel::flags(const QModelIndex& index) const
{
    if (!index.isValid())
        return QAbstractTableModel::flags(index);
    return QAbstractTableModel::flags(index) | Qt::ItemIsDragEnabled | Qt::ItemNeverHasChildren;
}

QStringList TensorTableModel::mimeTypes() const
{
    return {QString::fromLatin1(kMimeType)};
}

QMimeData* TensorTableModel::mimeData(const QModelIndexList& indexes) const
{
    QList<int> tensors;
    tensors.reserve(indexes.size());
    for (const QModelIndex& index : indexes)
        if (index.isValid() && index.model() == this)
            tensors << index.row();
    std::sort(tensors.begin(), tensors.end());
    tensors.erase(std::unique(tensors.begin(), tensors.end()), tensors.end());
    if (tensors.isEmpty())
        return nullptr;
    QByteArray payload;
    QDataStream stream(&payload, QIODevice::WriteOnly);
    stream << m_path << tensors;
    auto* mime = new QMimeData;
    mime->setData(QString::fromLatin1(kMimeType), payload);
    return mime;
}

QList<int> TensorTableModel::tensorsFromMime(const QMimeData* mime, const QString& modelPath)
{
    if (!mime || !mime->hasFormat(QString::fromLatin1(kMimeType)))
        return {};
    QDataStream stream(mime->data(QString::fromLatin1(kMimeType)));
    QString path;
    QList<int> tensors;
    stream >> path >> tensors;
    if (stream.status() != QDataStream::Ok || path != modelPath)
        return {};
    return tensors;
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
    case Planned:
        return planned(int(&row - m_rows.constData()));
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
        if (column == Storage && row.typed)
            return tr("Inline, in typed fields (such as float_data or int64_data) rather than "
                      "raw_data. A save writes these values as raw_data, or into a data file "
                      "when the tensor goes external.");
        if (column == Storage && row.external)
            return tr("In data file %1, %2 bytes from offset %3")
                .arg(row.storage)
                .arg(row.length)
                .arg(row.offset);
        if (column == Storage)
            return tr("Inline: the bytes are in the .onnx file (raw_data).");
        if (column == Status && row.problemCount > 0)
            return QString(row.status + QStringLiteral(": ") + row.statusMessage
                + (row.problemCount > 1
                        ? tr("\n(and %1 more in the Problems panel)").arg(row.problemCount - 1)
                        : QString()));
        if (column == Planned && m_placement && m_placement->isPinned(index.row()))
            return tr("Pinned: the next save puts this tensor in %1, whatever the threshold.")
                .arg(PlacementState::describe(m_placement->pin(index.row())));
        if (column == Planned && !ruled(index.row()).isEmpty())
            return tr("The threshold rule: the next save puts this tensor in %1.")
                .arg(ruled(index.row()));
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
    case PinnedRole:
        return m_placement && m_placement->isPinned(index.row());
    }
    return {};
}

QString TensorTableModel::headerToolTip(int section)
{
    switch (section) {
    case Name:
        return tr("The tensor's name (the full scope/name is in each cell's tooltip).");
    case Scope:
        return tr("Where the tensor is declared: graph, a subgraph (graph/<node>/<attribute>) "
                  "or a function (function:<domain>:<name>).");
    case Kind:
        return tr("What holds the tensor: \"initializer\", \"sparse\" (a sparse "
                  "initializer's values or indices) or \"attribute\" (a node attribute).");
    case Dtype:
        return tr("The element type (float, float16, int64, ...).");
    case Shape:
        return tr("The dimensions, outermost first.");
    case Size:
        return tr("Bytes of the tensor's data (elements x element size), in binary units "
                  "(1 KiB = 1024 bytes); the bar is its share of the largest tensor.");
    case Storage:
        return tr("Where the bytes are now: \"inline\" (raw_data in the .onnx), \"inline "
                  "(typed)\" (typed fields such as float_data), or the data file's name.");
    case Planned:
        return tr("Where the next save puts each tensor: inline, or a data file. A pinned "
                  "one (*) goes where its pin says (drag rows onto the Placement pane or a "
                  "file in the layout map to pin them); with \"Keep tensors where they are\" "
                  "unchecked, every other one where the threshold rule puts it; empty rows "
                  "stay where they are.");
    case Offset:
        return tr("Byte offset of the tensor in its data file (external tensors only).");
    case Length:
        return tr("Bytes the tensor occupies in its data file (external tensors only).");
    case Status:
        return tr("\"ok\", or the code of the tensor's first problem (see the Problems "
                  "panel).");
    }
    return {};
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::ToolTipRole)
        return headerToolTip(section);
    if (role != Qt::DisplayRole)
        return {};
    static const char* const kTitles[ColumnCount] = {
        QT_TR_NOOP("Name"),
        QT_TR_NOOP("Scope"),
        QT_TR_NOOP("Kind"),
        QT_TR_NOOP("Type"),
        QT_TR_NOOP("Shape"),
        QT_TR_NOOP("Size"),
        QT_TR_NOOP("Storage"),
        QT_TR_NOOP("Planned"),
        QT_TR_NOOP("Offset"),
        QT_TR_NOOP("Length"),
        QT_TR_NOOP("Status"),
    };
    return tr(kTitles[section]);
}

} // namespace ui
