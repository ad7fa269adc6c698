// The window's side of a save: starts the SaveJob on what the window shows, turns its progress
// into the status bar's bar, asks before replacing files that other models read or that no model
// uses, naming those models (the job stops before writing any), says when another save of the
// folder is running and offers to wait for it (still cancellable) or stop, and reports the end: the
// status bar (with data files the model no longer uses), a "Saved with a warning" dialog when a
// step after the commit point failed, a "Save failed" dialog when nothing changed on disk. The
// window stays the owner of the model: it hands the model over when a save starts and takes
// the saved model's snapshot back from saved().
#pragma once

#include "core/plan/save_options.h"
#include "core/plan/save_request.h"
#include "model_owner.h"
#include "ui/models/model_snapshot.h"

#include <QObject>

#include <functional>
#include <optional>
#include <vector>

class QMainWindow;

namespace repack {
class Model;
struct SaveConflict;
} // namespace repack

namespace ui {

class BusyIndicator;
class SaveJob;
struct SaveOutcome;

// What the busy indicator says of a save's progress: the tensor being written, and once every
// byte is written, the steps left (syncing to disk, renaming into place), which take a while
// on a large model; empty when there is nothing to say.
QString saveProgressText(quint64 done, quint64 total, const QString& tensor);

// The name "Write … Instead" offers when `conflicts` are in the way of the save of `request` as
// `modelPath`: the save's data file, the one the user chose (or the core's default), under the
// first free "-N" name (anotherDataName); empty when another name would not get the save out of
// their way (keeping every tensor where it is, with the save's data file not among them).
QString insteadDataName(const repack::SaveRequest& request, const QString& modelPath,
    const std::vector<repack::SaveConflict>& conflicts);

class SaveFlow : public QObject {
    Q_OBJECT
public:
    // What a save writes, read each time one starts: the model (its write lease: null when
    // it cannot be written now) and the rows shown now.
    struct Source {
        ModelOwner::WriteLease model;
        QList<TensorRow> shown;
    };

    // Dialogs and messages go to `window`, which owns this; progress goes to `busy`. `owner`
    // holds the model `source` leases: a save whose lease waits for readers starts once it is
    // writable().
    SaveFlow(QMainWindow* window, BusyIndicator* busy, ModelOwner* owner,
        std::function<Source()> source);

    SaveJob* job() const { return m_job; }
    bool isRunning() const;
    // Starts saving to `path` what `request` asks for (applied by the core, as the CLI's and
    // the Python package's), with the pins `placements`; false when nothing was started (a
    // refused request says why). A save never waits for another save of the folder unasked:
    // it stops and asks (Wait / Cancel); nor replaces files others read unasked.
    bool start(const QString& path, repack::SaveRequest request,
        std::vector<repack::TensorPlacement> placements);
    // The request of the last save as it ran: "Write <name> Instead" changed its data file
    // (renamedDataFile()).
    const repack::SaveRequest& request() const { return m_request; }
    bool renamedDataFile() const { return m_renamed; }
    void cancel();

Q_SIGNALS:
    void aboutToWrite(); // our own writes are not "changed on disk" by someone else
    void busyChanged(const QString& what); // "Saving…" when started, empty when over
    void saved(const ui::SaveOutcome& outcome); // rebuild the views from outcome.snapshot
    void declined(); // nothing written: the user kept the files in the way
    void failed(); // nothing changed on disk: cancelled, refused or failed
    void finished(bool ok); // after saved, declined or failed and their messages

private:
    void onProgress(quint64 done, quint64 total, const QString& tensor);
    void onFinished(const SaveOutcome& outcome);
    // Nothing written, at the user's word: says so and finishes.
    void decline();
    // The model's lease is writable now: a save that waited for it starts.
    void resume();
    // True when the user chooses to wait for the save holding `folder` (Wait is the default).
    bool askToWait(const QString& folder);
    // Starts the job on m_request; `waitFor`: the busy folder whose save it waits for, as long
    // as it takes.
    bool startJob(const QString& path, const QString& waitFor);

    QMainWindow* m_window;
    BusyIndicator* m_busy;
    ModelOwner* m_owner;
    std::function<Source()> m_source;
    // A save that waits for the last read lease to be given back (startJob's arguments).
    struct Deferred {
        QString path;
        QString waitFor;
    };
    std::optional<Deferred> m_deferred;
    SaveJob* m_job;
    // What the running save (or the one about to be asked again) was asked for.
    repack::SaveRequest m_request;
    std::vector<repack::TensorPlacement> m_placements;
    bool m_renamed = false; // "Write <name> Instead" named the save's data file
};

} // namespace ui
