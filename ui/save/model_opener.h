// Opens models off the GUI thread: the model (a path or a URL, repack::openModelArgument) and its
// snapshot are made on a worker while the window keeps painting and answering, and shows its
// current model until the new one is in. A newer open replaces one still loading, whose result
// then never arrives; cancel() drops the one loading. A URL's fetch hears both through a cancel
// token (it stops within about a second), reports the bytes fetched and says what it waits for
// on the network.
#pragma once

#include "ui/models/model_snapshot.h"
#include "ui/util/job_tracker.h"

#include <QObject>

#include <memory>

class QTimer;

namespace ui {

class WaitRelay;

class ModelOpener : public QObject {
    Q_OBJECT
public:
    explicit ModelOpener(QObject* parent = nullptr);
    ~ModelOpener() override;

    // Starts loading `path`; `quiet` travels with it to failed().
    void open(const QString& path, bool quiet);
    bool isLoading() const { return !m_path.isEmpty(); }
    QString path() const { return m_path; } // the model being loaded, as asked for
    // Drops the open running now (its result never arrives) and stops its fetch; cancelled()
    // says so at once. Nothing when none runs.
    void cancel();

Q_SIGNALS:
    // Emitted once the load is over (isLoading() is false by then).
    void opened(const ui::LoadedModel& loaded);
    void failed(const QString& path, const QString& error, bool quiet);
    void cancelled(const QString& path);
    // Bytes of a URL's structure fetched so far, of at most `total` (the file's size); a few
    // times a second while they grow.
    void progress(quint64 done, quint64 total);
    // What the open waits for on the network (a retry's pause), a few times a second at most;
    // "" once it waits no more, or is over.
    void waitingFor(const QString& what);

private:
    struct Shared;
    void onFinished(const LoadedModel& loaded);
    void poll();

    JobTracker m_jobs;
    std::shared_ptr<Shared> m_shared; // the open running now
    QTimer* m_poll;
    WaitRelay* m_waits;
    quint64 m_reported = 0;
    QString m_path; // the model being loaded, empty when none
    bool m_quiet = false;
};

} // namespace ui
