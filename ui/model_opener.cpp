#include "model_opener.h"

#include <QtConcurrent/QtConcurrentRun>

namespace ui {

ModelOpener::ModelOpener(QObject* parent)
    : QObject(parent)
{
    connect(&m_watcher, &QFutureWatcher<LoadedModel>::finished, this, &ModelOpener::onFinished);
}

void ModelOpener::open(const QString& path, bool quiet)
{
    // Replacing the watched future drops the older one's result.
    m_path = path;
    m_quiet = quiet;
    m_watcher.setFuture(QtConcurrent::run(loadModel, path));
}

void ModelOpener::onFinished()
{
    // Taken, not copied: the future keeps no reference that could free the model here later.
    const LoadedModel loaded = m_watcher.future().takeResult();
    const bool quiet = m_quiet;
    m_path.clear();
    if (loaded.model)
        Q_EMIT opened(loaded);
    else
        Q_EMIT failed(loaded.path, loaded.error, quiet);
}

} // namespace ui
