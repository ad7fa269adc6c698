#include "save_planning.h"

#include "core/model/model.h"

#include <QMutex>

namespace ui {
namespace {

QMutex observerMutex;
std::function<void(QThread*)> observer;

} // namespace

repack::Result<repack::SavePlan> SavePlanning::plan() const
{
    {
        QMutexLocker lock(&observerMutex);
        if (observer)
            observer(QThread::currentThread());
    }
    return repack::planSave(*model, path, options);
}

void setPlanningObserver(std::function<void(QThread*)> newObserver)
{
    QMutexLocker lock(&observerMutex);
    observer = std::move(newObserver);
}

} // namespace ui
