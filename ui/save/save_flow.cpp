#include "save_flow.h"

#include "replace_dialog.h"
#include "save_job.h"
#include "ui/util/byte_format.h"
#include "ui/views/busy_indicator.h"
#include "ui/views/repack_panel.h"

#include "core/plan/save_plan.h"
#include "core/save/save.h"
#include "core/save/save_conflicts.h"

#include <QDir>
#include <QFileInfo>
#include <QMainWindow>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>

#include <algorithm>
#include <filesystem>
#include <limits>

namespace ui {
namespace {

QString fileName(const std::filesystem::path& path)
{
    return QString::fromStdString(path.filename().string());
}

// The data files an in-place save stopped using, those kept and those removed.
QString describeUnused(const repack::SaveReport& report)
{
    QStringList kept;
    QStringList removed;
    for (const auto& file : report.noLongerUsed) {
        const bool gone = std::find(report.removed.cbegin(), report.removed.cend(), file)
            != report.removed.cend();
        (gone ? removed : kept) << fileName(file);
    }
    QStringList parts;
    if (!kept.isEmpty())
        parts << SaveFlow::tr("No longer used by this model, kept: %1")
                     .arg(kept.join(QStringLiteral(", ")));
    if (!removed.isEmpty())
        parts
            << SaveFlow::tr("No longer used, removed: %1").arg(removed.join(QStringLiteral(", ")));
    return parts.join(QStringLiteral("; "));
}

} // namespace

QString insteadDataName(const repack::SaveRequest& request, const QString& modelPath,
    const std::vector<repack::SaveConflict>& conflicts)
{
    const std::filesystem::path model(modelPath.toStdString());
    // The name the user chose, else the one the core gives the fields as they are.
    std::string data = request.data;
    if (data.empty()) {
        auto applied = repack::applySaveRequest(request, model, RepackPanel::optionNames());
        if (!applied)
            return {};
        data = repack::saveDataFile(model, applied->options);
    }
    // With the rule another name always helps; keeping every tensor where it is, only when
    // the save's data file (where the pins that name none go) is in the way.
    const std::filesystem::path path = (model.parent_path() / data).lexically_normal();
    if (request.keep
        && std::none_of(conflicts.begin(), conflicts.end(),
            [&path](const repack::SaveConflict& conflict) { return conflict.file == path; }))
        return {};
    return anotherDataName(QFileInfo(modelPath).absoluteDir(), QString::fromStdString(data));
}

SaveFlow::SaveFlow(
    QMainWindow* window, BusyIndicator* busy, ModelOwner* owner, std::function<Source()> source)
    : QObject(window)
    , m_window(window)
    , m_busy(busy)
    , m_owner(owner)
    , m_source(std::move(source))
    , m_job(new SaveJob(this))
{
    connect(m_owner, &ModelOwner::writable, this, &SaveFlow::resume);
    connect(m_job, &SaveJob::progressChanged, this, &SaveFlow::onProgress);
    connect(m_job, &SaveJob::waitingFor, m_busy, &BusyIndicator::setWaiting);
    connect(m_job, &SaveJob::finished, this, &SaveFlow::onFinished);
    // The indicator's Cancel also stops an open of the window: only a running save is ours.
    connect(m_busy, &BusyIndicator::cancelClicked, this, [this] {
        if (isRunning())
            cancel();
    });
}

bool SaveFlow::isRunning() const
{
    return m_job->isRunning() || m_deferred.has_value();
}

bool SaveFlow::start(const QString& path, repack::SaveRequest request,
    std::vector<repack::TensorPlacement> placements)
{
    if (isRunning())
        return false;
    m_request = std::move(request);
    m_placements = std::move(placements);
    m_renamed = false;
    return startJob(path, {});
}

bool SaveFlow::startJob(const QString& path, const QString& waitFor)
{
    // Waiting unasked would look like a hung save: the first try does not wait at all.
    repack::SaveRequest request = m_request;
    request.wait = waitFor.isEmpty() ? "0" : std::string(repack::kWaitAsLongAsItTakes);
    auto applied
        = repack::applySaveRequest(request, path.toStdString(), RepackPanel::optionNames());
    if (!applied) {
        QMessageBox::critical(m_window, tr("Cannot save"),
            tr("The model was not saved; the files on disk are unchanged.\n\n%1")
                .arg(QString::fromStdString(applied.error().message)));
        return false;
    }
    repack::SaveOptions options = std::move(applied->options);
    options.placements = m_placements;
    Q_EMIT aboutToWrite();
    Source source = m_source();
    if (!source.model && m_owner->writerWaits()) {
        // A job that ended still gives its read lease back on its pool thread: the save starts
        // once it has (resume()), never under a reader, and the GUI thread does not wait.
        m_deferred = Deferred{path, waitFor};
        Q_EMIT busyChanged(tr("Saving %1…").arg(QFileInfo(path).fileName()));
        return true;
    }
    if (!source.model) { // the model cannot be written now: never saved under a reader
        m_window->statusBar()->showMessage(
            tr("Not saved: the model is still being read; save again in a moment."), 8000);
        return false;
    }
    if (!m_job->start(std::move(source.model), path, std::move(options), source.shown))
        return false;
    Q_EMIT busyChanged(waitFor.isEmpty()
            ? tr("Saving %1…").arg(QFileInfo(path).fileName())
            : tr("Waiting for another save of %1 to finish…").arg(waitFor));
    return true;
}

void SaveFlow::resume()
{
    std::optional<Deferred> deferred = std::exchange(m_deferred, std::nullopt);
    if (deferred && !startJob(deferred->path, deferred->waitFor)) {
        Q_EMIT busyChanged({});
        decline();
    }
}

void SaveFlow::cancel()
{
    if (std::exchange(m_deferred, std::nullopt)) {
        m_owner->withdraw();
        Q_EMIT busyChanged({});
        decline();
        return;
    }
    m_job->cancel();
    m_busy->setText(tr("Cancelling…"));
}

QString saveProgressText(quint64 done, quint64 total, const QString& tensor)
{
    if (total > 0 && done >= total)
        return SaveFlow::tr("All %1 written: syncing to disk and renaming into place…")
            .arg(formatBytes(total));
    return tensor.isEmpty() ? QString() : SaveFlow::tr("Writing %1").arg(tensor);
}

void SaveFlow::onProgress(quint64 done, quint64 total, const QString& tensor)
{
    if (total == 0)
        return;
    m_busy->setProgress(done, total);
    if (const QString text = saveProgressText(done, total, tensor); !text.isEmpty())
        m_busy->setText(text);
}

void SaveFlow::onFinished(const SaveOutcome& outcome)
{
    Q_EMIT busyChanged({});
    if (!outcome.conflicts.empty()) {
        // Nothing was written: the worker found files in the way that are not only this
        // model's own.
        const QString freeName = insteadDataName(m_request, outcome.path, outcome.conflicts);
        switch (askToReplace(m_window, outcome.conflicts, tr("this model's"), freeName)) {
        case ReplaceAnswer::Replace:
            m_request.force = true;
            if (startJob(outcome.path, {}))
                return;
            break;
        case ReplaceAnswer::NewName:
            m_request.data = freeName.toStdString();
            m_renamed = true;
            if (startJob(outcome.path, {}))
                return;
            break;
        case ReplaceAnswer::Cancel:
            break;
        }
        decline();
        return;
    }
    if (!outcome.busyFolder.isEmpty()) {
        // Nothing was written: another save holds the folder.
        if (askToWait(outcome.busyFolder) && startJob(outcome.path, outcome.busyFolder))
            return;
        decline();
        return;
    }
    if (!outcome.ok) {
        Q_EMIT failed();
        if (outcome.cancelled)
            m_window->statusBar()->showMessage(
                tr("Save cancelled; the files on disk are unchanged."), 8000);
        else
            QMessageBox::critical(m_window, tr("Save failed"),
                tr("The model was not saved; the files on disk are unchanged.\n\n%1")
                    .arg(outcome.error));
        Q_EMIT finished(false);
        return;
    }
    Q_EMIT saved(outcome);
    const repack::SaveReport& report = outcome.report;
    // The files written apart from those kept as they were (the core says which): a kept file
    // was not saved, and the message never says it was.
    QStringList written{fileName(report.modelPath)};
    QStringList kept;
    for (const auto& file : report.dataFiles) {
        const bool keptFile = std::find(report.keptFiles.cbegin(), report.keptFiles.cend(), file)
            != report.keptFiles.cend();
        (keptFile ? kept : written) << fileName(file);
    }
    QString message = report.unchanged
        ? tr("Nothing to change: %1 kept as they were (%2 external, %3 inline tensors)")
              .arg((written + kept).join(QStringLiteral(", ")))
              .arg(report.externalTensors)
              .arg(report.inlineTensors)
        : tr("Saved %1: %2 written in %3 s (%4 external, %5 inline tensors)")
              .arg(written.join(QStringLiteral(", ")), formatBytes(report.bytesWritten))
              .arg(outcome.seconds, 0, 'f', 2)
              .arg(report.externalTensors)
              .arg(report.inlineTensors);
    if (!report.unchanged && !kept.isEmpty())
        message += tr("; kept %1 unchanged (not written)").arg(kept.join(QStringLiteral(", ")));
    const QString unused = describeUnused(report);
    if (!unused.isEmpty())
        message += QStringLiteral(". ") + unused;
    m_window->statusBar()->showMessage(message);
    if (!report.warnings.empty()) {
        QStringList warnings;
        for (const std::string& warning : report.warnings)
            warnings << QString::fromStdString(warning);
        QMessageBox::warning(m_window, tr("Saved with a warning"),
            tr("The model was saved: the new model is on disk and loads. A step after saving "
               "failed:\n\n%1")
                .arg(warnings.join(u'\n')));
    }
    Q_EMIT finished(true);
}

void SaveFlow::decline()
{
    Q_EMIT declined();
    m_window->statusBar()->showMessage(tr("Not saved; the files on disk are unchanged."), 8000);
    Q_EMIT finished(false);
}

bool SaveFlow::askToWait(const QString& folder)
{
    QMessageBox box(QMessageBox::Information, tr("Another save is running"),
        tr("Cannot save yet: another save is running in %1.\n\nWait for it to finish, then "
           "save? You can still cancel while waiting.")
            .arg(folder),
        QMessageBox::NoButton, m_window);
    QPushButton* wait = box.addButton(tr("Wait"), QMessageBox::AcceptRole);
    QPushButton* cancel = box.addButton(QMessageBox::Cancel);
    box.setDefaultButton(wait);
    box.setEscapeButton(cancel);
    box.exec();
    return box.clickedButton() == wait;
}

} // namespace ui
