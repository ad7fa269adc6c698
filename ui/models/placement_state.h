// The hand-made placement plan of the open model (SPEC 5b): a pin per tensor index (Auto, Inline
// or External into a named file), edited only through undoable commands on a QUndoStack. Pins
// that cannot work are refused before anything changes, with the reason (lastRefusal, refused):
// at once for what the rows tell (a STRING tensor to a data file, an unusable file name), after
// a check on a worker for a plan the save would refuse (planSave grows with the model). Edits
// land in the order they were made. The window merges plan() into the SaveOptions it previews
// and saves.
#pragma once

#include "model_snapshot.h"
#include "ui/util/job_tracker.h"

#include "core/plan/save_options.h"

#include <QHash>
#include <QObject>

#include <deque>

#include <functional>
#include <vector>

class QUndoStack;

namespace ui {

class PlacementState : public QObject {
    Q_OBJECT
public:
    // Why the save of `plan` (with the window's other options) could not be planned; empty
    // when it could. Runs on a worker thread, so it owns all it reads.
    using PlanCheck = std::function<QString(const std::vector<repack::TensorPlacement>& plan)>;
    // Makes, on the GUI thread, the check of the moment (the model and options as they are
    // now); an empty check when there is nothing to check against (no model, a save running).
    using PlanCheckMaker = std::function<PlanCheck()>;

    explicit PlacementState(QObject* parent = nullptr);
    ~PlacementState() override;

    // Another model (or the same one re-read): no pins, no undo history.
    void setSnapshot(const ModelSnapshot& snapshot);
    void setPlanCheck(PlanCheckMaker maker) { m_makeCheck = std::move(maker); }
    // Edits are waiting for their check (or for one before them).
    bool isChecking() const { return !m_queue.empty(); }
    // Blocks until the check running now (if any) has finished; for a save about to change the
    // model the check reads. Its edit still lands (or is refused) through the event loop.
    void waitForChecks();

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
    // Whether `destination` is where `tensor` is stored now: inline for an inline tensor, its
    // own data file (by any spelling) for an external one. Such a pin moves nothing.
    bool staysPut(int tensor, const repack::TensorPlacement& destination) const;
    // The pins that move their tensor (not staysPut): what saving would change, and closing
    // would lose.
    int movingCount() const;
    // For SaveOptions::plan: one entry per tensor, or empty when nothing is pinned. A pin to
    // the file the tensor is in keeps its offset, so that keeping the layout it stays put.
    std::vector<repack::TensorPlacement> plan() const;
    QUndoStack* undoStack() const { return m_undo; }

    // Each is one undoable edit; tensors already there are left out, and an edit that changes
    // nothing is not pushed. pinTo refuses at once (false, refused(reason)) a pin the rows say
    // cannot work; else (true) the edit lands once the save's plan was checked on a worker, or
    // is refused then (refused(reason)).
    bool pinTo(const QList<int>& tensors, const repack::TensorPlacement& destination);
    void resetPins(const QList<int>& tensors);
    void resetAll();
    // Replaces every pin at once (an imported plan), one undoable edit, once checked like
    // pinTo's; refused (refused(reason)) when the save could not be planned with it. `applied`
    // is called when it has landed.
    void replaceAll(const std::vector<repack::TensorPlacement>& plan, const QString& text,
        std::function<void()> applied = {});

    // Why pinning `tensors` to `destination` cannot work, as far as the rows tell (empty when
    // it can): a STRING tensor to a data file, an unusable or aliasing file name. A plan the
    // save would refuse (the 2 GiB inline limit, ...) is found by the check on a worker.
    QString refusalFor(const QList<int>& tensors, const repack::TensorPlacement& destination) const;
    // Why `name` cannot name a data file of this model (empty when it can).
    QString fileNameError(const QString& name) const;
    QString lastRefusal() const { return m_lastRefusal; }

    // "inline", the file name, or "save's data file" (External without a name).
    static QString describe(const repack::TensorPlacement& destination);

Q_SIGNALS:
    // Tensor indices whose pin changed.
    void pinsChanged(const QList<int>& tensors);
    // An undo (`undone`) or redo changed the pins of `tensors` back or again: the window shows
    // them.
    void revisited(const QList<int>& tensors, bool undone);
    void refused(const QString& reason);

private:
    friend class PinCommand;
    // An edit waiting for its check: pinTo's (tensors to destination) or replaceAll's (whole).
    struct PendingEdit {
        QList<int> tensors;
        repack::TensorPlacement destination;
        bool whole = false;
        std::vector<repack::TensorPlacement> plan;
        QString text;
        std::function<void()> applied;
    };
    void enqueue(PendingEdit edit);
    void checkNext();
    void land(const QString& error);
    std::vector<repack::TensorPlacement> pinsAfter(const PendingEdit& edit) const;
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
    PlanCheckMaker m_makeCheck;
    std::deque<PendingEdit> m_queue; // the front one is being checked
    JobTracker m_checks;
    quint64 m_generation = 0; // counts changes of m_pins: a check of older pins is redone
    QString m_lastRefusal;
};

} // namespace ui
