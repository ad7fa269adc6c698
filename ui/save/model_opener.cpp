#include "model_opener.h"

namespace ui {

ModelOpener::ModelOpener(QObject* parent)
    : QObject(parent)
{
}

void ModelOpener::open(const QString& path, bool quiet)
{
    // A newer start supersedes the older one, whose result is dropped.
    m_path = path;
    m_quiet = quiet;
    m_jobs.start(
        [path] { return loadModel(path); }, [this](LoadedModel loaded) { onFinished(loaded); });
}

void ModelOpener::onFinished(const LoadedModel& loaded)
{
    const bool quiet = m_quiet;
    m_path.clear();
    if (loaded.model)
        Q_EMIT opened(loaded);
    else
        Q_EMIT failed(loaded.path, loaded.error, quiet);
}

} // namespace ui
