#include "placement_model.h"

#include "model_snapshot.h"
#include "placement_state.h"

#include <QFont>

namespace ui {

PlacementModel::PlacementModel(PlacementState* state, QObject* parent)
    : QAbstractListModel(parent)
    , m_state(state)
{
    connect(m_state, &PlacementState::pinsChanged, this, &PlacementModel::rebuild);
    rebuild();
}

void PlacementModel::setSnapshot(const ModelSnapshot& snapshot)
{
    m_hasModel = !snapshot.path.isEmpty();
    m_modelFiles.clear();
    for (const repack::FileLayout& file : snapshot.layouts)
        m_modelFiles << QString::fromStdString(file.location);
    rebuild();
}

void PlacementModel::setSaveDataFile(const QString& name)
{
    if (name == m_saveDataFile)
        return;
    m_saveDataFile = name;
    rebuild();
}

void PlacementModel::rebuild()
{
    // Without a model there is nothing to place, and no save's data file to name.
    QList<Row> rows;
    if (m_hasModel)
        rows = {{Kind::Inline, {}, true}, {Kind::SaveDataFile, m_saveDataFile, true}};
    auto add = [&](const QString& location, bool onDisk) {
        if (location == m_saveDataFile)
            return;
        for (const Row& row : rows)
            if (row.kind == Kind::File && row.location == location)
                return;
        rows.push_back({Kind::File, location, onDisk});
    };
    for (const QString& file : m_modelFiles)
        add(file, true);
    for (const QString& file : m_state->pinnedFiles())
        add(file, false);
    if (m_hasModel)
        rows.push_back({Kind::NewFile, {}, false});

    const bool same = rows.size() == m_rows.size()
        && std::equal(rows.begin(), rows.end(), m_rows.begin(), [](const Row& a, const Row& b) {
               return a.kind == b.kind && a.location == b.location && a.onDisk == b.onDisk;
           });
    if (same) {
        if (!m_rows.isEmpty())
            Q_EMIT dataChanged(index(0), index(rowCount() - 1));
        return;
    }
    beginResetModel();
    m_rows = rows;
    endResetModel();
}

repack::TensorPlacement PlacementModel::destination(int row) const
{
    if (row < 0 || row >= m_rows.size())
        return {};
    switch (m_rows[row].kind) {
    case Kind::Inline:
        return {repack::Placement::Inline};
    case Kind::SaveDataFile:
        return {repack::Placement::External};
    case Kind::File:
        return {repack::Placement::External, m_rows[row].location.toStdString()};
    case Kind::NewFile:
        break;
    }
    return {};
}

int PlacementModel::rowOf(const QString& location) const
{
    for (int r = 0; r < m_rows.size(); ++r)
        if ((m_rows[r].kind == Kind::File || m_rows[r].kind == Kind::SaveDataFile)
            && m_rows[r].location == location)
            return r;
    return -1;
}

int PlacementModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

Qt::ItemFlags PlacementModel::flags(const QModelIndex& index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    Q_ASSERT(checkIndex(index, CheckIndexOption::ParentIsInvalid));
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDropEnabled
        | Qt::ItemNeverHasChildren;
}

QString PlacementModel::displayText(const Row& row, int pinned) const
{
    QString text;
    switch (row.kind) {
    case Kind::Inline:
        text = tr("Inline");
        break;
    case Kind::SaveDataFile:
        text = tr("%1 (save's data file)").arg(row.location);
        break;
    case Kind::File:
        text = row.onDisk ? row.location : tr("%1 (new)").arg(row.location);
        break;
    case Kind::NewFile:
        return tr("+ New data file…");
    }
    return pinned ? tr("%1 — %n pinned", nullptr, pinned).arg(text) : text;
}

QVariant PlacementModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& row = m_rows[index.row()];
    const int pinned
        = row.kind == Kind::NewFile ? 0 : m_state->pinnedCount(destination(index.row()));
    switch (role) {
    case Qt::DisplayRole:
        return displayText(row, pinned);
    case Qt::ToolTipRole:
        // A long file name is cut short in a narrow pane: the tooltip starts with it whole.
        switch (row.kind) {
        case Kind::Inline:
            return tr("Drop tensors here to keep them inside the .onnx file.");
        case Kind::SaveDataFile:
            return QString(displayText(row, pinned) + u'\n'
                + tr("Drop tensors here to store them in the save's data file (%1), sharded "
                     "like the tensors the threshold sends there.")
                      .arg(row.location));
        case Kind::File:
            return QString(displayText(row, pinned) + u'\n'
                + tr("Drop tensors here to store them in %1.").arg(row.location));
        case Kind::NewFile:
            return tr("Drop tensors here to name a new data file for them.");
        }
        return {};
    case Qt::FontRole:
        if (pinned) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    case KindRole:
        return int(row.kind);
    case LocationRole:
        return row.location;
    case PinnedCountRole:
        return pinned;
    case OnDiskRole:
        return row.onDisk;
    }
    return {};
}

} // namespace ui
