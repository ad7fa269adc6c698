#include "save_flow.h"

#include "busy_indicator.h"
#include "byte_format.h"
#include "save_job.h"

#include <QFileInfo>
#include <QMainWindow>
#include <QMessageBox>
#include <QStatusBar>

namespace ui {
namespace {

QString local(const std::filesystem::path& path)
{
    return QString::fromStdString(path.string());
}

} // namespace

SaveFlow::SaveFlow(QMainWindow* window, BusyIndicator* busy, std::function<Source()> source)
    : QObject(window)
    , m_window(window)
    , m_busy(busy)
    , m_source(std::move(source))
    , m_job(new SaveJob(this))
{
    connect(m_job, &SaveJob::progressChanged, this, &SaveFlow::onProgress);
    connect(m_job, &SaveJob::finished, this, &SaveFlow::onFinished);
    connect(m_busy, &BusyIndicator::cancelClicked, this, &SaveFlow::cancel);
}

bool SaveFlow::isRunning() const
{
    return m_job->isRunning();
}

bool SaveFlow::start(const QString& path, repack::SaveOptions options)
{
    Q_EMIT aboutToWrite();
    const Source source = m_source();
    if (!m_job->start(*source.model, path, std::move(options), source.shown))
        return false;
    Q_EMIT busyChanged(tr("Saving %1…").arg(QFileInfo(path).fileName()));
    return true;
}

void SaveFlow::cancel()
{
    m_job->cancel();
    m_busy->setText(tr("Cancelling…"));
}

void SaveFlow::onProgress(quint64 done, quint64 total, const QString& tensor)
{
    if (total == 0)
        return;
    m_busy->setProgress(done, total);
    if (!tensor.isEmpty())
        m_busy->setText(tr("Writing %1").arg(tensor));
}

void SaveFlow::onFinished(const SaveOutcome& outcome)
{
    Q_EMIT busyChanged({});
    if (!outcome.foreignFiles.empty()) {
        // Nothing was written: the worker found files the model does not use in the way.
        QStringList names;
        for (const auto& file : outcome.foreignFiles)
            names << local(file);
        const auto answer = QMessageBox::question(m_window, tr("Overwrite data file?"),
            tr("Saving will overwrite files that this model does not use (they may belong to "
               "another model):\n\n%1\n\nOverwrite them?")
                .arg(names.join(u'\n')),
            QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
        repack::SaveOptions options = outcome.options;
        options.force = true;
        if (answer == QMessageBox::Yes && start(outcome.path, std::move(options)))
            return;
        Q_EMIT declined();
        m_window->statusBar()->showMessage(tr("Not saved; the files on disk are unchanged."), 8000);
        Q_EMIT finished(false);
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
    QStringList written{QFileInfo(local(outcome.report.modelPath)).fileName()};
    for (const auto& file : outcome.report.dataFiles)
        written << QFileInfo(local(file)).fileName();
    m_window->statusBar()->showMessage(
        tr("Saved %1: %2 written in %3 s (%4 external, %5 inline tensors)")
            .arg(written.join(QStringLiteral(", ")), formatBytes(outcome.report.bytesWritten))
            .arg(outcome.seconds, 0, 'f', 2)
            .arg(outcome.report.externalTensors)
            .arg(outcome.report.inlineTensors));
    Q_EMIT finished(true);
}

} // namespace ui
