#include "save_job.h"

#include "save_planning.h"

#include "core/model/model.h"
#include "core/plan/save_plan.h"
#include "core/save/save.h"
#include "core/save_lock.h"

namespace ui {
namespace {

constexpr int kProgressIntervalMs = 150;

// The first folder a save of `model` to `target` writes into that another save holds (the
// model's folder, then the data files'), or empty: which one, after the save said it was busy.
QString busyFolder(const ModelOwner::WriteLease& model, const std::filesystem::path& target,
    const repack::SaveOptions& options)
{
    std::vector<std::filesystem::path> folders{
        std::filesystem::absolute(target).lexically_normal().parent_path()};
    if (auto plan = SavePlanning{model.shared(), target, options}.plan())
        folders = repack::saveFolders(target, *plan);
    for (const auto& folder : folders) {
        if (repack::FolderLock::isHeld(folder))
            return QString::fromStdString(folder.string());
    }
    return {};
}

// The save itself, on the worker; `outcome` holds what was asked for.
SaveOutcome runSave(const ModelOwner::WriteLease& lease, const std::filesystem::path& target,
    const repack::SaveOptions& options, const repack::CancelToken& cancel, SaveOutcome outcome,
    const QList<TensorRow>& shown)
{
    repack::Model& model = *lease;
    if (!options.force) {
        auto conflicts = repack::saveConflicts(model, target, options);
        if (!conflicts) {
            // Names that alias are refused whatever the consent: nothing was written.
            outcome.error = QString::fromStdString(conflicts.error().message);
            return outcome;
        }
        if (cancel.isCancelled()) {
            outcome.cancelled = true;
            outcome.error = QStringLiteral("save cancelled");
            return outcome;
        }
        outcome.conflicts = std::move(conflicts.value());
        if (!outcome.conflicts.empty())
            return outcome;
    }
    auto result = repack::save(model, target, options);
    if (result) {
        outcome.ok = true;
        outcome.report = std::move(result.value());
        outcome.snapshot = takeSnapshot(model);
        addFolderProblems(outcome.snapshot, model);
        outcome.sameTensors = sameTensors(shown, outcome.snapshot.tensors);
    } else {
        const repack::Error& error = result.error();
        outcome.cancelled = error.is(repack::ErrorKind::Cancelled);
        outcome.error = QString::fromStdString(error.message);
        if (error.is(repack::ErrorKind::Busy)) {
            outcome.busyFolder = busyFolder(lease, target, options);
            if (outcome.busyFolder.isEmpty()) // that other save has just finished
                outcome.busyFolder = QString::fromStdString(
                    std::filesystem::absolute(target).lexically_normal().parent_path());
        }
    }
    return outcome;
}

} // namespace

SaveJob::SaveJob(QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<ui::SaveOutcome>();
    m_pollTimer.setInterval(kProgressIntervalMs);
    connect(&m_pollTimer, &QTimer::timeout, this, &SaveJob::poll);
    connect(&m_waits, &WaitRelay::changed, this, &SaveJob::waitingFor);
}

SaveJob::~SaveJob()
{
    if (isRunning()) {
        m_shared->cancel.cancel();
        m_jobs.waitForFinished();
    }
}

void SaveJob::onFinished(SaveOutcome outcome)
{
    outcome.model.release(); // the window's to read again
    m_pollTimer.stop();
    m_waits.stop();
    poll();
    outcome.seconds = m_clock.elapsed() / 1000.0;
    Q_EMIT finished(outcome);
}

bool SaveJob::start(ModelOwner::WriteLease lease, const QString& path, repack::SaveOptions options,
    const QList<TensorRow>& shown)
{
    if (isRunning() || !lease)
        return false;
    m_shared = std::make_shared<Shared>();
    SaveOutcome request;
    request.path = path;
    options.cancel = &m_shared->cancel;
    options.progress = [shared = m_shared](const repack::Progress& p) {
        shared->done.store(p.bytesDone, std::memory_order_relaxed);
        shared->total.store(p.bytesTotal, std::memory_order_relaxed);
        // The name is only valid during the callback: copy it, but never wait for the GUI.
        if (shared->tensorMutex.tryLock()) {
            shared->tensor = QString::fromUtf8(p.tensor.data(), qsizetype(p.tensor.size()));
            shared->tensorMutex.unlock();
        }
    };
    const std::filesystem::path target = path.toStdString();
    m_clock.start();
    m_pollTimer.start();
    m_waits.watch(m_shared->cancel);
    m_jobs.start(
        [lease = std::move(lease), target, options, shared = m_shared, request, shown]() mutable {
            SaveOutcome outcome = runSave(lease, target, options, shared->cancel, request, shown);
            outcome.model = std::move(lease); // released on the GUI thread (onFinished)
            return outcome;
        },
        [this](SaveOutcome outcome) { onFinished(std::move(outcome)); });
    return true;
}

void SaveJob::cancel()
{
    if (isRunning())
        m_shared->cancel.cancel();
}

void SaveJob::waitForFinished()
{
    m_jobs.waitForFinished();
}

void SaveJob::poll()
{
    if (!m_shared)
        return;
    QString tensor;
    {
        QMutexLocker lock(&m_shared->tensorMutex);
        tensor = m_shared->tensor;
    }
    Q_EMIT progressChanged(m_shared->done.load(), m_shared->total.load(), tensor);
}

} // namespace ui
