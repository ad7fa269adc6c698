// FolderWindow's saves: the plan of the savings a shared data file gives, the save of the folder
// in place (the consent it may need, the models lent by the windows showing them) and the local
// copy of a folder of the Hub, each cancellable.
#include "folder_window.h"

#include "ui/save/model_holder.h"
#include "ui/save/replace_dialog.h"
#include "ui/util/byte_format.h"
#include "ui/util/display_name.h"
#include "ui/util/shown_lines.h"
#include "ui/util/wait_relay.h"
#include "ui/views/elided_label.h"

#include "core/inspect/folder_inspect.h"
#include "core/inspect/readers.h"
#include "core/remote/model_source.h"
#include "core/save/folder_save.h"
#include "core/save/save_conflicts.h"

#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>

#include <algorithm>
#include <atomic>

namespace ui {
namespace {

struct FolderSaveOutcome {
    repack::Result<repack::FolderSaveReport> report = repack::Error::internal("not run");
    // Consent needed: the file the save would replace and the models that read it.
    std::vector<repack::SaveConflict> conflicts;
};

// The model files of the graphs a save of `dir` writes (every .onnx directly in it).
std::vector<std::filesystem::path> graphsOf(const std::filesystem::path& dir)
{
    std::vector<std::filesystem::path> out;
    if (auto names = repack::modelsInFolder(dir))
        for (const std::string& name : *names)
            out.push_back(dir / name);
    return out;
}

// Why the save of `dir` with the shared file `name` needs consent, from the core's one answer
// to "who reads this file" (core/inspect/readers.h): the models outside the graphs that read
// it, in every folder one could name it from; none: no model uses it.
repack::SaveConflict conflictOf(
    const std::filesystem::path& dir, const std::string& name, const std::string& message)
{
    repack::SaveConflict conflict;
    conflict.file = (dir / name).lexically_normal();
    conflict.users = repack::readersOf(conflict.file, {{dir}, graphsOf(dir)}).all();
    conflict.message = message;
    return conflict;
}

// A shared data name beside `name` (relative to `dir`) that no file has: "s.data" gives
// "s-2.data", "sub/model.onnx_data" gives "sub/model-2.onnx_data".
QString freeSharedName(const QString& dir, const QString& name)
{
    const QFileInfo file(name);
    const QString suffix
        = file.completeSuffix().isEmpty() ? QString() : u'.' + file.completeSuffix();
    const QString free
        = freeFileName(QDir(QDir(dir).filePath(file.path())), file.baseName(), suffix, 2);
    if (free.isEmpty() || file.path() == QStringLiteral("."))
        return free;
    return file.path() + u'/' + free;
}

// What a save wrote, said once it is done (the plan of the next save says "nothing to change").
QString savedText(const repack::FolderSaveReport& r)
{
    if (r.unchanged)
        return FolderWindow::tr("nothing to change: nothing written");
    QString text
        = FolderWindow::tr("Saved %n graph(s) and %1: %2 written", nullptr, int(r.models.size()))
              .arg(QString::fromStdString(
                       r.sharedData.lexically_relative(r.folder).generic_string()),
                  formatBytes(r.bytesAfter));
    if (!r.removed.empty())
        text += FolderWindow::tr(
            "; %n data file(s) no model reads removed", nullptr, int(r.removed.size()));
    return text;
}

// A save's progress into what the window polls: the phase (1 comparing, 2 writing, 0 another
// step) and the permille of it done.
repack::ProgressCallback progressInto(
    std::shared_ptr<std::atomic<int>> permille, std::shared_ptr<std::atomic<int>> phase)
{
    return [permille, phase](const repack::Progress& p) {
        phase->store(p.phase == repack::kPhaseComparing ? 1
                : p.phase == repack::kPhaseWriting      ? 2
                                                        : 0);
        if (p.bytesTotal)
            permille->store(int(1000 * p.bytesDone / p.bytesTotal));
    };
}

} // namespace

// Written by the plan's job before it returns, so a save asked for meanwhile can wait for the
// job (JobTracker::waitForFinished) and read it without the delivery.
struct FolderWindow::Planned {
    QString name;
    std::atomic<bool> done{false};
    std::vector<std::filesystem::path> removed;
};

// What a shared save would give, planned on a worker (nothing is written).
void FolderWindow::planSavings()
{
    const QString name = m_sharedName->text().trimmed();
    if (isReadOnly()) {
        m_savings->setText(readOnlyReason());
        m_savings->setToolTip(m_savings->text());
        m_save->setToolTip(readOnlyReason());
        return;
    }
    if (m_dir.isEmpty() || name.isEmpty()) {
        m_savings->clear();
        return;
    }
    const std::string dir = m_dir.toStdString();
    repack::FolderSaveOptions options;
    options.sharedData = name.toStdString();
    options.dryRun = true;
    m_planned = std::make_shared<Planned>();
    m_planned->name = name;
    m_plan.start(
        [dir, options, planned = m_planned] {
            auto plan = std::make_shared<repack::Result<repack::FolderSaveReport>>(
                repack::saveFolder(dir, dir, options));
            if (*plan)
                planned->removed = (*plan)->removed;
            planned->done = true;
            return plan;
        },
        [this](std::shared_ptr<repack::Result<repack::FolderSaveReport>> plan) {
            if (!*plan) {
                m_savings->setText(QString::fromStdString(plan->error().message));
                m_savings->setToolTip(m_savings->text());
                return;
            }
            const repack::FolderSaveReport& r = **plan;
            // Just saved: what was written, as long as nothing is left to change.
            QString text = r.unchanged && !m_savedText.isEmpty() ? m_savedText
                : r.unchanged                                    ? tr("nothing to change")
                              : tr("%1 now, %2 after (%3 distinct weights)")
                                    .arg(formatBytes(r.bytesBefore), formatBytes(r.bytesAfter))
                                    .arg(r.sharedRanges);
            if (!r.consentNeeded.empty())
                text += tr("; replaces a file other models read");
            m_savings->setText(text);
            m_savings->setToolTip(QString::fromStdString(r.consentNeeded));
        });
}

void FolderWindow::confirmAndSave()
{
    const QString trimmed = m_sharedName->text().trimmed();
    if (isReadOnly() || m_dir.isEmpty() || isBusy())
        return saveShared(trimmed);
    if (!m_planned || m_planned->name != trimmed)
        planSavings();
    if (m_planned && !m_planned->done) {
        QApplication::setOverrideCursor(Qt::WaitCursor);
        m_plan.waitForFinished(); // the plan of the name shown, most often done by now
        QApplication::restoreOverrideCursor();
    }
    // A plan that failed names nothing: the save fails the same way, writing nothing.
    const std::vector<std::filesystem::path> removed
        = m_planned && m_planned->done ? m_planned->removed : std::vector<std::filesystem::path>{};
    if (!removed.empty()) {
        QStringList names;
        for (const auto& path : removed)
            names << QDir(m_dir).relativeFilePath(QString::fromStdString(path.string()));
        QMessageBox box(QMessageBox::Question, tr("Remove data files?"),
            tr("Saving the folder with %1 removes %n data file(s) that no model reads "
               "afterwards:\n\n%2\n\nSave and remove them?",
                nullptr, int(names.size()))
                .arg(trimmed, shownLines(names)),
            QMessageBox::NoButton, this);
        if (isCut(names))
            box.setDetailedText(names.join(u'\n'));
        QPushButton* save = box.addButton(tr("Save and Remove"), QMessageBox::AcceptRole);
        QPushButton* cancel = box.addButton(QMessageBox::Cancel);
        box.setDefaultButton(cancel);
        box.setEscapeButton(cancel);
        box.exec();
        if (box.clickedButton() != save) {
            setBusy(false, tr("Not saved; the files on disk are unchanged."));
            emit saved(false);
            return;
        }
    }
    saveShared(trimmed);
}

void FolderWindow::saveShared(const QString& name)
{
    startSave(name.trimmed(), false);
}

void FolderWindow::startSave(const QString& name, bool force)
{
    if (isReadOnly()) {
        m_lastError = readOnlyReason();
        return;
    }
    if (m_dir.isEmpty() || isBusy())
        return;
    prepareSave();
    m_pending = Pending{name, force};
    setBusy(true, tr("Saving the graphs of %1 with %2…").arg(m_dir, name));
    borrowAndSave();
}

void FolderWindow::newCommand()
{
    m_cancelToken = std::make_shared<repack::CancelToken>();
    m_waits->watch(*m_cancelToken);
}

void FolderWindow::prepareSave()
{
    newCommand();
    m_permille->store(0);
    m_phase->store(0);
    m_savedText.clear();
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setFormat(QStringLiteral("%p%"));
}

void FolderWindow::askAndSaveLocalCopy()
{
    const QString outDir = QFileDialog::getExistingDirectory(
        this, tr("Save a Local Copy of %1 Into").arg(shownName(m_dir)));
    if (!outDir.isEmpty())
        saveLocalCopy(outDir, m_sharedName->text());
}

void FolderWindow::saveLocalCopy(const QString& outDir, const QString& name)
{
    if (m_pinned.isEmpty() || isBusy())
        return;
    prepareSave();
    m_savingName = name.trimmed();
    auto options = std::make_shared<repack::FolderSaveOptions>();
    options->sharedData = m_savingName.toStdString();
    options->controls.cancel = m_cancelToken.get();
    options->controls.progress = progressInto(m_permille, m_phase);
    // The folder listed anew at the commit the window shows, never at its branch (which a push
    // may have moved since), and read once: a file that changed on the server during the save
    // fails it (Changed), never retried (as `onnx-repack repack hf://…@COMMIT/… -o DIR`). The
    // folder the inspection opened is not reused: its requests stop by the inspection's token.
    m_saving.start(
        [url = m_pinned.toStdString(), out = outDir.toStdString(), options, token = m_cancelToken] {
            auto folder = repack::openFolderArgument(url, token.get());
            return std::make_shared<repack::Result<repack::FolderSaveReport>>(folder
                    ? repack::saveFolder(**folder, out, *options)
                    : repack::Result<repack::FolderSaveReport>(folder.error()));
        },
        [this, outDir, from = m_pinned](
            std::shared_ptr<repack::Result<repack::FolderSaveReport>> report) {
            setBusy(false, {});
            const bool ok = bool(*report);
            if (ok) {
                m_lastError.clear();
                m_savings->setText(
                    tr("Local copy of %1 in %2: %3").arg(from, outDir, savedText(**report)));
            } else if (report->error().is(repack::ErrorKind::Cancelled)) {
                m_lastError.clear();
                m_savings->setText(tr("Local copy cancelled; nothing written to %1.").arg(outDir));
            } else {
                m_lastError
                    = tr("No local copy of %1 saved into %2: %3")
                          .arg(from, outDir, QString::fromStdString(report->error().message));
                m_savings->setText(m_lastError);
                QMessageBox::warning(this, tr("Cannot save a local copy"), m_lastError);
            }
            m_savings->setToolTip(m_savings->text());
            emit copySaved(ok);
        });
    setBusy(true, {});
}

void FolderWindow::borrowAndSave()
{
    if (!m_pending)
        return;
    if (m_cancelToken->isCancelled()) {
        giveBack(false);
        m_pending.reset();
        setBusy(false, tr("Save cancelled; the files on disk are unchanged."));
        emit saved(false);
        return;
    }
    QStringList graphs;
    for (const auto& path : graphsOf(m_dir.toStdString()))
        graphs << QString::fromStdString(path.string());
    for (ModelHolder* holder : ModelHolder::showing(graphs)) {
        auto loan = std::find_if(m_loans.begin(), m_loans.end(),
            [holder](const Loan& l) { return l.holder == holder && l.window; });
        if (loan != m_loans.end() && loan->lease)
            continue;
        if (loan == m_loans.end()) {
            if (const QString why = holder->whyNotLend(); !why.isEmpty()) {
                giveBack(false);
                m_pending.reset();
                m_lastError = tr("Not saved: %1. Save the folder once it is done.").arg(why);
                setBusy(false, m_lastError);
                emit saved(false);
                return;
            }
            loan = m_loans.insert(m_loans.end(), Loan{holder->self(), holder, {}});
        }
        loan->lease = holder->lend();
        if (!loan->lease) {
            // A job of that window still gives its read lease back: go on once it has.
            connect(&holder->owner(), &ModelOwner::writable, this, &FolderWindow::borrowAndSave,
                Qt::SingleShotConnection);
            return;
        }
    }
    runSave(*std::exchange(m_pending, std::nullopt));
}

void FolderWindow::runSave(const Pending& save)
{
    const std::string dir = m_dir.toStdString();
    auto options = std::make_shared<repack::FolderSaveOptions>();
    options->sharedData = save.name.toStdString();
    options->controls.force = save.force;
    options->controls.cancel = m_cancelToken.get();
    m_savingName = save.name;
    options->controls.progress = progressInto(m_permille, m_phase);
    auto token = m_cancelToken; // kept alive by the job as long as it runs
    m_saving.start(
        [dir, options, token] {
            auto outcome = std::make_shared<FolderSaveOutcome>();
            outcome->report = repack::saveFolder(dir, dir, *options);
            if (!outcome->report && outcome->report.error().is(repack::ErrorKind::ConsentNeeded))
                outcome->conflicts.push_back(
                    conflictOf(dir, options->sharedData, outcome->report.error().message));
            return outcome;
        },
        [this, name = save.name](std::shared_ptr<FolderSaveOutcome> outcome) {
            setBusy(false, {});
            const bool ok = bool(outcome->report);
            giveBack(ok && !outcome->report->unchanged);
            if (!outcome->conflicts.empty()) {
                // Nothing was written: ask, as the single save does.
                const QString freeName = freeSharedName(m_dir, name);
                switch (
                    askToReplace(this, outcome->conflicts, tr("the folder's graphs'"), freeName)) {
                case ReplaceAnswer::Replace:
                    startSave(name, true);
                    return;
                case ReplaceAnswer::NewName:
                    m_sharedName->setText(freeName);
                    startSave(freeName, false);
                    return;
                case ReplaceAnswer::Cancel:
                    m_lastError = tr("Not saved; the files on disk are unchanged.");
                    m_summary->setText(m_lastError);
                    emit saved(false);
                    return;
                }
            }
            m_lastError = ok ? QString() : QString::fromStdString(outcome->report.error().message);
            if (!ok && outcome->report.error().is(repack::ErrorKind::Cancelled)) {
                // Nothing changed: the tables stand and Save is usable at once (reading the
                // folder again took seconds on a folder of GiB, Save disabled all along).
                m_summary->setText(tr("Save cancelled; the files on disk are unchanged."));
                emit saved(false);
                return;
            }
            if (ok)
                m_savedText = savedText(*outcome->report);
            openFolder(m_dir); // the folder as it is now, whatever happened
            if (!ok)
                m_summary->setText(m_lastError);
            emit saved(ok);
        });
    setBusy(true, {});
}

void FolderWindow::giveBack(bool rewritten)
{
    for (Loan& loan : std::exchange(m_loans, {})) {
        loan.lease.release();
        if (loan.window)
            loan.holder->giveBack(rewritten);
    }
}

void FolderWindow::cancel()
{
    m_cancelToken->cancel();
    if (m_pending)
        borrowAndSave(); // still waiting for a window's model: stops there
}

} // namespace ui
