// The destinations of the placement pane, one row each: Inline, the save's data file, every data
// file of the model, the files pins name, and "New data file…"; each with its pinned count.
#pragma once

#include "core/plan/save_options.h"

#include <QAbstractListModel>
#include <QStringList>

namespace ui {

class PlacementState;
struct ModelSnapshot;

class PlacementModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum class Kind { Inline, SaveDataFile, File, NewFile };
    enum Roles {
        KindRole = Qt::UserRole, // int(Kind)
        LocationRole, // QString: the data file name (File rows)
        PinnedCountRole, // int: tensors pinned here
        OnDiskRole, // bool: a data file the model uses now (not only named by a pin)
    };

    explicit PlacementModel(PlacementState* state, QObject* parent = nullptr);

    // The model's data files (in the order of its layout map); no rows at all without a model
    // (an empty path).
    void setSnapshot(const ModelSnapshot& snapshot);
    // What the save's data file is called now ("<model>.data" or the repack panel's name).
    void setSaveDataFile(const QString& name);
    QString saveDataFile() const { return m_saveDataFile; }

    // Where a tensor dropped on `row` goes; Auto for "New data file…" (a name is needed first).
    repack::TensorPlacement destination(int row) const;
    // The row of the data file `location` (File or SaveDataFile), or -1.
    int rowOf(const QString& location) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

private:
    struct Row {
        Kind kind;
        QString location;
        bool onDisk = false;
    };
    void rebuild();
    QString displayText(const Row& row, int pinned) const;

    PlacementState* m_state;
    QStringList m_modelFiles;
    QString m_saveDataFile;
    bool m_hasModel = false; // no rows without one
    QList<Row> m_rows;
};

} // namespace ui
