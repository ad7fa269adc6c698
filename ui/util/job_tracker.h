// Work that grows with the model runs on a pool thread; its result comes back on the GUI thread,
// in the manner of KDAB/hotspot's jobtracker.h. Each start() supersedes the job before it: a
// superseded job still runs to its end (a job that can stop early takes a cancel token of its
// own), but its result is never delivered and is freed on a pool thread, not the GUI thread.
// Destroying the tracker drops whatever is still running, so nothing is delivered to an owner
// that is gone.
#pragma once

#include "background.h"

#include <QFutureWatcher>
#include <QObject>
#include <QtConcurrent/QtConcurrentRun>

#include <type_traits>
#include <utility>

namespace ui {

class JobTracker : public QObject {
    Q_OBJECT
public:
    explicit JobTracker(QObject* parent = nullptr);
    ~JobTracker() override;

    // Runs `job()` on a pool thread, then `deliver(result)` on this object's thread, unless
    // another start() or reset() came in between. `job` must own (or share) all it reads.
    template <class Job, class Deliver> void start(Job&& job, Deliver&& deliver)
    {
        using Result = std::invoke_result_t<std::decay_t<Job>&>;
        const quint64 id = ++m_latest;
        m_running = true;
        auto* watcher = new QFutureWatcher<Result>(this);
        connect(watcher, &QFutureWatcherBase::finished, this,
            [this, watcher, id, deliver = std::forward<Deliver>(deliver)]() mutable {
                // Taken, not copied: the future keeps no reference that could free it here.
                // Taking resets the future (it no longer counts as finished): the watcher leaves
                // the children waitForFinished() waits for.
                watcher->setParent(nullptr);
                watcher->deleteLater();
                Result result = watcher->future().takeResult();
                if (id != m_latest) {
                    releaseInBackground(std::move(result));
                    return;
                }
                m_running = false;
                deliver(std::move(result));
            });
        watcher->setFuture(QtConcurrent::run(std::forward<Job>(job)));
    }

    // The latest job has not delivered yet.
    bool isRunning() const { return m_running; }
    // Drops the result of the job running now (if any): it is never delivered.
    void reset();
    // Blocks until every job started here that has not delivered (or been dropped) yet has
    // finished, superseded ones too; the latest result is still delivered through the event
    // loop. For owners whose jobs read what they are about to destroy or change.
    void waitForFinished();

private:
    quint64 m_latest = 0;
    bool m_running = false;
};

} // namespace ui
