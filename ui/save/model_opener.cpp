#include "model_opener.h"

#include "ui/util/wait_relay.h"

#include "core/progress.h"

#include <QTimer>

#include <atomic>

namespace ui {

// What the worker and the window share: the worker writes the bytes fetched, the window asks it
// to stop.
struct ModelOpener::Shared {
    repack::CancelToken cancel;
    std::atomic<quint64> done{0};
    std::atomic<quint64> total{0};
};

ModelOpener::ModelOpener(QObject* parent)
    : QObject(parent)
    , m_poll(new QTimer(this))
    , m_waits(new WaitRelay(this))
{
    m_poll->setInterval(200);
    connect(m_poll, &QTimer::timeout, this, &ModelOpener::poll);
    connect(m_waits, &WaitRelay::changed, this, &ModelOpener::waitingFor);
}

ModelOpener::~ModelOpener()
{
    if (m_shared)
        m_shared->cancel.cancel(); // the worker's result is dropped with the tracker
}

void ModelOpener::open(const QString& path, bool quiet)
{
    // A newer start supersedes the older one, whose result is dropped and whose fetch stops.
    if (m_shared)
        m_shared->cancel.cancel();
    m_shared = std::make_shared<Shared>();
    m_path = path;
    m_quiet = quiet;
    m_reported = 0;
    m_poll->start();
    m_waits->watch(m_shared->cancel);
    m_jobs.start(
        [path, shared = m_shared] {
            return loadModel(path, &shared->cancel, [&shared = *shared](const repack::Progress& p) {
                shared.done.store(p.bytesDone, std::memory_order_relaxed);
                shared.total.store(p.bytesTotal, std::memory_order_relaxed);
            });
        },
        [this](LoadedModel loaded) { onFinished(loaded); });
}

void ModelOpener::cancel()
{
    if (!isLoading())
        return;
    m_shared->cancel.cancel();
    m_shared.reset();
    m_jobs.reset();
    m_poll->stop();
    m_waits->stop();
    Q_EMIT cancelled(std::exchange(m_path, {}));
}

void ModelOpener::poll()
{
    if (!m_shared)
        return;
    const quint64 done = m_shared->done.load(std::memory_order_relaxed);
    if (done == m_reported)
        return;
    m_reported = done;
    Q_EMIT progress(done, m_shared->total.load(std::memory_order_relaxed));
}

void ModelOpener::onFinished(const LoadedModel& loaded)
{
    const bool quiet = m_quiet;
    m_path.clear();
    m_shared.reset();
    m_poll->stop();
    m_waits->stop();
    if (loaded.model)
        Q_EMIT opened(loaded);
    else
        Q_EMIT failed(loaded.path, loaded.error, quiet);
}

} // namespace ui
