#include "job_tracker.h"

namespace ui {

JobTracker::JobTracker(QObject* parent)
    : QObject(parent)
{
}

JobTracker::~JobTracker()
{
    // The watchers (children) go with this object: no result is delivered from here on.
    reset();
}

void JobTracker::reset()
{
    ++m_latest;
    m_running = false;
}

void JobTracker::waitForFinished()
{
    // Each job's watcher is a child until its result is in.
    const auto watchers = findChildren<QFutureWatcherBase*>(Qt::FindDirectChildrenOnly);
    for (QFutureWatcherBase* watcher : watchers)
        watcher->waitForFinished();
}

} // namespace ui
