// The hand-made placement plan of the open model (SPEC 5b): a pin per tensor index (Auto, Inline
// or External into a named file), edited only through undoable commands on a QUndoStack. Pins
// that cannot work are refused before anything changes, with the reason (lastRefusal, refused).
// The window merges plan() into the SaveOptions it previews and saves.
#pragma once

#include "model_snapshot.h"

#include "core/save_options.h"

#include <QHash>
#include <QObject>

#include <functional>
#include <vector>

class QUndoStack;

namespace ui {

class PlacementState : public QObject {
    Q_OBJECT
public:
    // Why the save of `plan` (with the window's other options) could not be planned; empty
    // when it could.
    using PlanCheck = std::function<QString(const std::vector<repack::TensorPlacement>& plan)>;

    explicit PlacementState(QObject* parent = nullptr);
    ~PlacementState() override;

    // Another model (or the same one re-read): no pins, no undo history.
    void setSnapshot(const ModelSnapshot& snapshot);
    void setPlanCheck(PlanCheck check) { m_check = std::move(check); }

    QString modelPath() const { return m_modelPath; }
    int tensorCount() const { return int(m_pins.size()); }
    const repack::TensorPlacement& pin(int tensor) const { return m_pins[size_t(tensor)]; }
    bool isPinned(int tensor) const
    {
        return tensor >= 0 && tensor < tensorCount()
            && m_pins[size_t(tensor)].kind != repack::Placement::Auto;
    }
    int pinnedCount() const { return m_pinned; }
    // How many tensors are pinned to exactly `destination`.
    int pinnedCount(const repack::TensorPlacement& destination) const;
    // Named data files that pins send tensors to, sorted.
    QStringList pinnedFiles() const;
    // For SaveOptions::plan: one entry per tensor, or empty when nothing is pinned.
    std::vector<repack::TensorPlacement> plan() const;
    QUndoStack* undoStack() const { return m_undo; }

    // Each is one undoable edit; tensors already there are left out, and an edit that changes
    // nothing is not pushed. pinTo refuses (false, refused(reason)) a pin that cannot work.
    bool pinTo(const QList<int>& tensors, const repack::TensorPlacement& destination);
    void resetPins(const QList<int>& tensors);
    void resetAll();
    // Replaces every pin at once (an imported plan), one undoable edit; refused like pinTo
    // when the save could not be planned with it.
    bool replaceAll(const std::vector<repack::TensorPlacement>& plan, const QString& text);

    // Why pinning `tensors` to `destination` cannot work (empty when it can): a STRING tensor
    // to a data file, an unusable or aliasing file name, or a plan the save would refuse (the
    // 2 GiB inline limit, ...).
    QString refusalFor(const QList<int>& tensors, const repack::TensorPlacement& destination) const;
    // Why `name` cannot name a data file of this model (empty when it can).
    QString fileNameError(const QString& name) const;
    QString lastRefusal() const { return m_lastRefusal; }

    // "inline", the file name, or "save's data file" (External without a name).
    static QString describe(const repack::TensorPlacement& destination);

Q_SIGNALS:
    // Tensor indices whose pin changed.
    void pinsChanged(const QList<int>& tensors);
    void refused(const QString& reason);

private:
    friend class PinCommand;
    void apply(const QList<int>& tensors, const std::vector<repack::TensorPlacement>& values);
    bool refuse(const QString& reason);
    void push(
        const QList<int>& tensors, std::vector<repack::TensorPlacement> after, const QString& text);

    QUndoStack* m_undo;
    QString m_modelPath;
    QList<TensorRow> m_rows; // shared with the snapshot: names and types for refusals
    std::vector<repack::TensorPlacement> m_pins;
    QHash<QString, int> m_counts; // key(destination) -> pinned tensors
    int m_pinned = 0;
    PlanCheck m_check;
    QString m_lastRefusal;
};

} // namespace ui
