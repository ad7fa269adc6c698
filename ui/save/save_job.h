// Runs repack::save on a worker thread. The core reports progress from that thread; this
// object keeps only the latest numbers (atomics) and a timer on the GUI thread polls them a few
// times a second, so a fast save cannot flood the event loop. Cancel sets the core's token, which
// also says what the save of a remote model waits for on the network (waitingFor).
// Unless options.force, the worker first asks the core for the save's conflicts: files it would
// replace that other models read or that no model uses (a folder scan that may parse sibling
// models: far too slow for the GUI thread), and writes nothing if there are any. After a save it
// also takes the snapshot of the saved model, with the problems of its folder. A save that
// failed while another save holds a folder it writes into (SPEC 5a: one save at a time) says
// which folder, so the caller can offer to wait.
// While running, the worker holds the model's write lease (ui/save/model_owner.h): no one else
// reads it until finished().
#pragma once

#include "core/progress.h"
#include "core/save/save.h"
#include "core/save/save_conflicts.h"
#include "model_owner.h"
#include "ui/models/model_snapshot.h"
#include "ui/util/job_tracker.h"
#include "ui/util/wait_relay.h"

#include <QElapsedTimer>
#include <QMutex>
#include <QObject>
#include <QTimer>

#include <atomic>
#include <memory>

namespace repack {
class Model;
}

namespace ui {

struct SaveOutcome {
    QString path; // as asked for
    bool ok = false;
    bool cancelled = false;
    // Nothing written: may these files be replaced? Each names the models that would then read
    // wrong bytes (none: no model uses it).
    std::vector<repack::SaveConflict> conflicts;
    QString error; // why not saved: nothing on disk changed
    // Not saved because another save holds this folder's lock (options.lockWaitMs ran out).
    QString busyFolder;
    // ok with report.warnings: the new model is on disk and loads, but a step after the commit
    // point failed ("saved with a warning", never "nothing changed").
    repack::SaveReport report;
    ModelSnapshot snapshot; // of the saved model, built on the worker so the GUI never stalls
    bool sameTensors = false; // snapshot.tensors are those of `shown`, only stored elsewhere
    double seconds = 0; // wall clock, including waiting for the disk
    // The model's write lease, handed back to the GUI thread and released there before
    // finished(): a job owns what it reads (ui/util/job_tracker.h).
    ModelOwner::WriteLease model;
};

class SaveJob : public QObject {
    Q_OBJECT
public:
    explicit SaveJob(QObject* parent = nullptr);
    ~SaveJob() override;

    // Starts saving the model of the write lease `model` to `path`; false when a save is
    // already running. The job holds the lease until it finished. `shown` are the rows the
    // window shows now (read on the worker, never changed while it runs).
    bool start(ModelOwner::WriteLease model, const QString& path, repack::SaveOptions options,
        const QList<TensorRow>& shown);
    bool isRunning() const { return m_jobs.isRunning(); }
    // Blocks until the running save (if any) has finished; for closing the window.
    void waitForFinished();

public Q_SLOTS:
    void cancel();

Q_SIGNALS:
    void progressChanged(quint64 bytesDone, quint64 bytesTotal, const QString& tensor);
    // What the save waits for on the network (reading a remote model's bytes), a few times a
    // second at most; "" once it waits no more, or is over.
    void waitingFor(const QString& what);
    void finished(const ui::SaveOutcome& outcome);

private:
    void poll();

    void onFinished(SaveOutcome outcome);

    JobTracker m_jobs;
    QTimer m_pollTimer;
    QElapsedTimer m_clock;
    WaitRelay m_waits;
    // Shared with the worker; a shared_ptr so a worker outliving this object stays valid.
    struct Shared {
        repack::CancelToken cancel;
        std::atomic<uint64_t> done{0};
        std::atomic<uint64_t> total{0};
        QMutex tensorMutex;
        QString tensor;
    };
    std::shared_ptr<Shared> m_shared;
};

} // namespace ui

Q_DECLARE_METATYPE(ui::SaveOutcome)
