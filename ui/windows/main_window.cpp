#include "main_window.h"

#include "about_box.h"
#include "model_options.h"
#include "recent_files.h"
#include "ui/models/placement_state.h"
#include "ui/models/problems_model.h"
#include "ui/models/tensor_filter_proxy.h"
#include "ui/models/tensor_table_model.h"
#include "ui/save/model_opener.h"
#include "ui/save/save_flow.h"
#include "ui/save/save_job.h"
#include "ui/save/save_planning.h"
#include "ui/save/save_preview.h"
#include "ui/util/background.h"
#include "ui/util/byte_format.h"
#include "ui/util/display_name.h"
#include "ui/util/job_tracker.h"
#include "ui/util/settings_store.h"
#include "ui/util/shipped_files.h"
#include "ui/util/window_fit.h"
#include "ui/views/busy_indicator.h"
#include "ui/views/compact_action.h"
#include "ui/views/layout_map_view.h"
#include "ui/views/placement_view.h"
#include "ui/views/repack_panel.h"
#include "ui/views/summary_strip.h"

#include "core/model/model.h"
#include "core/plan/save_plan.h"
#include "core/remote/model_source.h"
#include "core/save/save_conflicts.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>

#include <algorithm>
#include <optional>

namespace ui {
namespace {

QString local(const std::filesystem::path& path)
{
    return QString::fromStdString(path.string());
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , ModelHolder(this)
    , m_tensorModel(new TensorTableModel(this))
    , m_proxy(new TensorFilterProxy(this))
    , m_problemsModel(new ProblemsModel(this))
    , m_filterTimer(new QTimer(this))
    , m_previewTimer(new QTimer(this))
    , m_changeTimer(new QTimer(this))
    , m_watcher(new QFileSystemWatcher(this))
    , m_opener(new ModelOpener(this))
    , m_previewJobs(new JobTracker(this))
    , m_exportJobs(new JobTracker(this))
{
    setAcceptDrops(true);
    setWindowIcon(QIcon(QStringLiteral(":/icons/onnx-repack-gui.svg")));
    m_proxy->setSourceModel(m_tensorModel);
    createWidgets();
    m_saveFlow = new SaveFlow(this, m_busy, &m_models, [this] {
        // The save's worker changes the model: no plan may still be reading it.
        finishPlanning();
        return SaveFlow::Source{m_models.write(), m_snapshot.tensors};
    });
    createActions();

    // Typing in the filter box re-filters once the user pauses, not on every key.
    m_filterTimer->setSingleShot(true);
    m_filterTimer->setInterval(200);
    connect(m_filter, &QLineEdit::textChanged, m_filterTimer, qOverload<>(&QTimer::start));
    connect(m_filterTimer, &QTimer::timeout, this, [this] { m_proxy->setText(m_filter->text()); });
    connect(m_storageFilter, &QComboBox::currentIndexChanged, this,
        [this](int index) { m_proxy->setStorageFilter(TensorFilterProxy::StorageFilter(index)); });

    m_previewTimer->setSingleShot(true);
    m_previewTimer->setInterval(150);
    connect(m_panel, &RepackPanel::optionsChanged, m_previewTimer, qOverload<>(&QTimer::start));
    connect(m_previewTimer, &QTimer::timeout, this, &MainWindow::updatePreview);

    m_changeTimer->setSingleShot(true);
    m_changeTimer->setInterval(400);
    connect(
        m_watcher, &QFileSystemWatcher::fileChanged, m_changeTimer, qOverload<>(&QTimer::start));
    connect(m_changeTimer, &QTimer::timeout, this, &MainWindow::onFileChanged);

    connect(m_opener, &ModelOpener::opened, this, &MainWindow::onOpened);
    connect(m_opener, &ModelOpener::failed, this, &MainWindow::onOpenFailed);
    connect(m_opener, &ModelOpener::progress, this, &MainWindow::onOpenProgress);
    connect(m_opener, &ModelOpener::waitingFor, m_busy, &BusyIndicator::setWaiting);
    connect(m_opener, &ModelOpener::cancelled, this, [this](const QString& path) {
        setBusy({});
        statusBar()->showMessage(tr("Opening %1 cancelled").arg(displayName(path)), 5000);
    });
    connect(m_busy, &BusyIndicator::cancelClicked, this, &MainWindow::cancelOpen);
    connect(m_saveFlow, &SaveFlow::aboutToWrite, this, &MainWindow::unwatchFiles);
    connect(m_saveFlow, &SaveFlow::busyChanged, this, &MainWindow::setBusy);
    connect(m_saveFlow, &SaveFlow::saved, this, &MainWindow::onSaved);
    connect(m_saveFlow, &SaveFlow::declined, this, &MainWindow::watchFiles);
    connect(m_saveFlow, &SaveFlow::failed, this, [this] {
        watchFiles();
        updatePreview();
    });
    connect(m_saveFlow, &SaveFlow::finished, this, [this](bool ok) {
        // What waited for this save (an open, a close) goes ahead only once it succeeded.
        if (std::function<void()> then = std::exchange(m_afterSave, {}); ok && then)
            QTimer::singleShot(0, this, [this, then = std::move(then)] {
                // Not under a dialog opened meanwhile (Compare With…): the open or close would
                // pull the window from under it.
                if (QApplication::activeModalWidget()) {
                    statusBar()->showMessage(
                        tr("Saved. A dialog is open: open or close again when it is done."), 10000);
                    return;
                }
                then();
            });
        Q_EMIT saveFinished(ok);
    });
    // The title's mark follows what closing would lose.
    connect(m_placement, &PlacementState::pinsChanged, this, &MainWindow::updateModified);
    connect(m_panel, &RepackPanel::optionsChanged, this, &MainWindow::updateModified);
    connect(m_map, &LayoutMapView::hiddenTensorClicked, this, [this](int tensor) {
        clearFilters();
        selectTensor(tensor);
    });

    // Geometry and pane sizes as left on this screen at this scale: those of another would
    // not fit, and a geometry that does not fit is not restored.
    resize(1360, 860);
    restoreFittingGeometry(
        this, setting(screenKey(QStringLiteral("window/geometry"), this)).toByteArray());
    fitOnScreen(this);
    restoreState(setting(screenKey(QStringLiteral("window/state"), this)).toByteArray());
    m_splitter->restoreState(
        setting(screenKey(QStringLiteral("window/splitter"), this)).toByteArray());
    updateTitle();
    setBusy({});
}

MainWindow::~MainWindow() = default;

bool MainWindow::openFile(const QString& path, bool quiet)
{
    if (isSaving())
        return false;
    if (!mayLeave(tr("opening %1").arg(displayName(path)),
            [this, path, quiet] { startOpen(path, quiet); }))
        return false;
    return startOpen(path, quiet);
}

bool MainWindow::s_quitting = false;

void MainWindow::quitAll()
{
    // closeAllWindows stops at a window that asks and is not closed yet; its Save comes back
    // here once saved.
    s_quitting = true;
    QApplication::closeAllWindows();
    s_quitting = false;
}

bool MainWindow::hasPendingWork() const
{
    // A pin to where the tensor is already stored changes nothing on disk.
    return m_models.hasModel() && (m_placement->movingCount() > 0 || m_panel->isEdited());
}

bool MainWindow::mayLeave(const QString& doing, std::function<void()> then)
{
    if (!hasPendingWork())
        return true;
    QStringList pending;
    if (const int pins = m_placement->movingCount())
        pending << tr("%n pinned tensor(s)", nullptr, pins);
    if (const QStringList fields = m_panel->editedFields(); !fields.isEmpty())
        pending << tr("changed options (%1)").arg(fields.join(QStringLiteral(", ")));
    const QString name = displayName(m_snapshot.path);
    QMessageBox box(QMessageBox::Question, tr("Save changes?"),
        tr("Save %1 with your changes before %2?").arg(name, doing),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
    box.setInformativeText(tr("Not saved yet: %1.").arg(pending.join(QStringLiteral("; "))));
    box.setDefaultButton(QMessageBox::Save);
    box.setEscapeButton(QMessageBox::Cancel);
    // A read-only model is never saved in place: its Save is Save As….
    QAbstractButton* saveButton = box.button(QMessageBox::Save);
    if (isReadOnly()) {
        saveButton->setText(tr("Save As…"));
        saveButton->setToolTip(readOnlyReason());
    }
    // A save the preview already refuses is no choice: say why on the button.
    const QString blocker = isSaving()      ? tr("The model is being saved with its folder")
        : !m_panel->saveBlocker().isEmpty() ? m_panel->saveBlocker()
                                            : m_panel->validationError();
    if (!blocker.isEmpty()) {
        saveButton->setEnabled(false);
        saveButton->setToolTip(blocker);
        box.setDefaultButton(QMessageBox::Cancel);
    }
    box.exec();
    if (box.clickedButton() == box.button(QMessageBox::Discard))
        return true;
    if (box.clickedButton() != saveButton)
        return false;
    const QString path = isReadOnly() ? askSaveAsPath() : m_snapshot.path;
    if (!path.isEmpty() && saveTo(path))
        m_afterSave = std::move(then);
    return false;
}

bool MainWindow::startOpen(const QString& path, bool quiet)
{
    if (isSaving())
        return false;
    // Parsing and indexing 100,000 tensors takes longer than a frame: a worker does it.
    m_opener->open(path, quiet);
    setBusy(tr("Opening %1…").arg(displayName(path)));
    return true;
}

void MainWindow::cancelOpen()
{
    m_opener->cancel();
}

void MainWindow::onOpenProgress(quint64 done, quint64 total)
{
    if (isLoading())
        m_busy->setText(
            tr("Fetching %1: %2 of at most %3")
                .arg(displayName(m_opener->path()), formatBytes(done), formatBytes(total)));
}

bool MainWindow::isLoading() const
{
    return m_opener->isLoading();
}

void MainWindow::onOpenFailed(const QString& path, const QString& error, bool quiet)
{
    setBusy({});
    reportOpenFailure(path, error, quiet);
}

void MainWindow::reportOpenFailure(const QString& path, const QString& error, bool quiet)
{
    m_lastError = error;
    statusBar()->showMessage(tr("Cannot open %1").arg(shownName(path)), 8000);
    if (!quiet)
        QMessageBox::warning(this,
            repack::namesHubFolder(path.toStdString()) ? tr("Cannot open folder")
                                                       : tr("Cannot open model"),
            m_lastError);
    Q_EMIT openFailed(path, error);
}

void MainWindow::onOpened(const LoadedModel& loaded)
{
    setBusy({});
    m_lastError.clear();
    // The old model and rows are freed off this thread once nothing here refers to them.
    std::shared_ptr<repack::Model> oldModel = m_models.reset(loaded.model);
    ModelSnapshot oldSnapshot = std::exchange(m_snapshot, loaded.snapshot);
    // The options it was last saved with here, else the defaults: never the last model's.
    m_panel->startFrom(optionsSavedWith(m_snapshot.path));
    m_panel->followModelFormat(dataFormatOf(m_snapshot));
    showSnapshot();
    releaseInBackground(std::make_pair(std::move(oldModel), std::move(oldSnapshot)));
    m_recent->add(m_snapshot.path);
    watchFiles();
    statusBar()->showMessage(tr("Opened %1: %n tensor(s)", nullptr, int(m_snapshot.tensors.size()))
                                 .arg(displayName(m_snapshot.path)),
        5000);
    Q_EMIT modelOpened(m_snapshot.path);
}

void MainWindow::showSnapshot(bool sameTensors)
{
    m_shipped = !m_snapshot.remote && isShipped(m_snapshot.path);
    countGapsForTheNextSave();
    showPlacement();
    m_readOnlyBanner->setVisible(m_snapshot.remote);
    if (m_snapshot.remote)
        m_readOnlyBanner->setText(
            tr("Read-only: %1 as served%2. Save As (Ctrl+S) writes a local copy with the "
               "options of the Repack pane.")
                .arg(shownName(m_snapshot.path),
                    m_snapshot.remoteVersion.isEmpty()
                        ? QString()
                        : tr(" (%1)").arg(m_snapshot.remoteVersion)));
    if (sameTensors)
        m_tensorModel->updateStorage(m_snapshot);
    else
        m_tensorModel->setSnapshot(m_snapshot);
    showProblems();
    m_summary->setSnapshot(m_snapshot);
    m_map->setSnapshot(m_snapshot);
    m_panel->setModelPath(m_snapshot.path);
    m_panel->setAlwaysCompacted(
        m_snapshot.remote ? compactedInACopy(m_snapshot.layouts) : QStringList());
    updateTitle();
    updatePreview();
    updateActions();
}

void MainWindow::showProblems()
{
    m_problemsModel->setSnapshot(m_snapshot);
    if (auto* dock = qobject_cast<QDockWidget*>(m_problemsView->parentWidget())) {
        const int errors = m_problemsModel->errorCount();
        const int count = m_problemsModel->rowCount();
        dock->setWindowTitle(count
                ? tr("Problems (%1 errors, %2 warnings)").arg(errors).arg(count - errors)
                : tr("Problems (none)"));
    }
}

void MainWindow::updateTitle()
{
    // The folder as a path: export folders hold models of one name (x/a/model.onnx, y/a/…).
    // "[*]": where the title marks a modified document (updateModified).
    setWindowTitle(m_snapshot.path.isEmpty() ? tr("Onnx Repack")
            : isReadOnly() ? tr("%1 (read-only)[*] — Onnx Repack").arg(displayName(m_snapshot.path))
                           : tr("%1[*] — Onnx Repack").arg(displayName(m_snapshot.path)));
    setWindowFilePath(m_snapshot.remote ? QString() : m_snapshot.path);
    updateModified();
}

void MainWindow::updateModified()
{
    setWindowModified(hasPendingWork());
}

void MainWindow::updatePreview()
{
    // Not while a save's worker writes the model (no read lease then).
    ModelOwner::ReadLease model = m_models.read();
    if (!model || isLoading())
        return;
    m_nothingToChange = false; // until this preview finds otherwise
    auto options = saveOptions();
    const QString invalid
        = options ? m_panel->validationError() : QString::fromStdString(options.error().message);
    if (!invalid.isEmpty()) {
        m_previewJobs->reset(); // a plan still being made is of other options
        m_tensorModel->setRulePlan(nullptr);
        m_panel->setPreview(tr("Cannot save: %1").arg(invalid), true);
        m_beforeAfter->clear(tr("Cannot save: %1").arg(invalid));
        return;
    }
    // planSave grows with the model (and reads bytes with dedupe): on a worker, like the diff.
    struct Preview {
        std::shared_ptr<const repack::SavePlan> plan; // null when the save cannot be planned
        QString error;
        bool unchanged = false;
        bool rule = false; // the threshold rule places the tensors not pinned
        QString text;
    };
    const SavePlanning planning{
        std::move(model), m_snapshot.path.toStdString(), std::move(*options)};
    // A save in place asks before replacing files others read: the preview says so first. A
    // read-only model is saved elsewhere only.
    std::optional<repack::SaveRequest> inPlace;
    if (!isReadOnly())
        inPlace = m_panel->request(m_snapshot.path);
    m_previewJobs->start(
        [planning, inPlace, rows = m_snapshot.tensors, files = fileTotals(m_snapshot)] {
            Preview preview;
            preview.rule = !planning.options.keepPlacement;
            auto plan = planning.plan();
            if (!plan) {
                preview.error = QString::fromStdString(plan.error().message);
                return preview;
            }
            // An in-place save that would write what is on disk already writes nothing: Save
            // says so.
            preview.unchanged = repack::planKeepsLayout(
                *planning.model, planning.path, plan.value(), planning.options);
            ModelSnapshot current; // describePlan reads the rows and the files' totals only
            current.tensors = rows;
            current.layouts = files;
            preview.text = describePlan(plan.value(), current);
            if (inPlace && !preview.unchanged) {
                // Names that alias are refused by the save itself, which says why.
                auto conflicts = repack::saveConflicts(
                    *planning.model, planning.path, plan.value(), planning.options);
                const QString path = QString::fromStdString(planning.path.string());
                if (conflicts && !conflicts->empty())
                    preview.text += u'\n'
                        + describeConflicts(
                            *conflicts, insteadDataName(*inPlace, path, *conflicts));
            }
            preview.plan = std::make_shared<const repack::SavePlan>(std::move(plan.value()));
            return preview;
        },
        [this](const Preview& preview) {
            // Where the rule puts each tensor not pinned, when it does (Planned column).
            m_tensorModel->setRulePlan(preview.rule ? preview.plan : nullptr);
            if (!preview.plan) {
                m_panel->setPreview(tr("Cannot save: %1").arg(preview.error), true);
                m_beforeAfter->clear(tr("Cannot save: %1").arg(preview.error));
                return;
            }
            m_panel->setPreview(preview.unchanged
                    ? tr("Nothing to change: the model and its data files are already laid out "
                         "as planned.")
                        + u'\n' + preview.text
                    : preview.text);
            m_beforeAfter->setPlan(m_snapshot, *preview.plan);
            m_nothingToChange = preview.unchanged;
            updateActions();
        });
}

void MainWindow::finishPlanning()
{
    // Its result still arrives (it is of the model as it is now).
    m_previewJobs->waitForFinished();
    m_exportJobs->waitForFinished();
    m_placement->waitForChecks();
}

bool MainWindow::isPlanning() const
{
    return m_previewJobs->isRunning() || m_exportJobs->isRunning() || m_placement->isChecking();
}

void MainWindow::open()
{
    const QString start = m_snapshot.path.isEmpty() || m_snapshot.remote
        ? QString()
        : QFileInfo(m_snapshot.path).absolutePath();
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open ONNX Model"), start, tr("ONNX models (*.onnx);;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::reload()
{
    if (!m_snapshot.path.isEmpty())
        openFile(m_snapshot.path);
}

void MainWindow::save()
{
    if (m_snapshot.path.isEmpty())
        return;
    if (m_shipped) // never written: Save offers Save As instead
        saveAs();
    else if (!isReadOnly())
        saveTo(m_snapshot.path);
}

void MainWindow::saveAs()
{
    if (!m_models.hasModel())
        return;
    if (const QString path = askSaveAsPath(); !path.isEmpty())
        saveTo(path);
}

QString MainWindow::askSaveAsPath()
{
    // A read-only model (from a URL, or shipped with the app) is saved to a folder of the
    // user's: its name is offered in the home folder.
    const QString start = isReadOnly()
        ? QDir::home().filePath(QFileInfo(shownName(m_snapshot.path)).fileName())
        : m_snapshot.path;
    return QFileDialog::getSaveFileName(
        this, tr("Save Model As"), start, tr("ONNX models (*.onnx)"));
}

bool MainWindow::saveTo(const QString& path)
{
    // While a model loads, the one shown is about to be replaced.
    if (!m_models.hasModel() || isSaving() || isLoading())
        return false;
    // Nothing the app ships is written, nor put beside what it ships.
    if (isShipped(path)) {
        QMessageBox::warning(this, tr("Cannot save"),
            tr("%1 is in the folder of the sample model Onnx Repack ships, which no save "
               "writes. Save it in another folder.")
                .arg(QFileInfo(path).fileName()));
        return false;
    }
    m_nothingToChange = false; // until this preview finds otherwise
    const QString invalid = m_panel->validationError();
    if (!invalid.isEmpty()) {
        QMessageBox::warning(this, tr("Cannot save"), invalid);
        return false;
    }
    m_savingOptions = m_panel->settingValues();
    return m_saveFlow->start(path, m_panel->request(path), m_placement->plan());
}

bool MainWindow::isSaving() const
{
    return m_models.isWriting();
}

void MainWindow::cancelSave()
{
    m_saveFlow->cancel();
}

SaveJob* MainWindow::saveJob() const
{
    return m_saveFlow->job();
}

void MainWindow::setBusy(const QString& what)
{
    // Its own save and an open (a URL's fetch) can be cancelled here.
    m_busy->show(what, m_saveFlow->isRunning() || isLoading());
    updateActions();
}

void MainWindow::updateActions()
{
    const bool saving = isSaving();
    m_panel->setEnabled(!saving);
    const bool canSave = !saving && !isLoading() && m_models.hasModel();
    // When the preview says the save would fail, the buttons say why instead of trying.
    const QString blocker = m_panel->saveBlocker();
    // Save on a model the app ships is Save As: never written in place, always offered.
    m_saveAction->setEnabled(
        canSave && blocker.isEmpty() && (m_shipped || (!m_nothingToChange && !isReadOnly())));
    m_saveAsAction->setEnabled(canSave && blocker.isEmpty());
    // A model read where it lives is never saved in place: Ctrl+S offers Save As (a local
    // copy) instead of doing nothing.
    m_saveAction->setShortcuts(
        isReadOnly() ? QList<QKeySequence>() : QKeySequence::keyBindings(QKeySequence::Save));
    m_saveAsAction->setShortcuts(QKeySequence::keyBindings(QKeySequence::SaveAs)
        + (isReadOnly() ? QKeySequence::keyBindings(QKeySequence::Save) : QList<QKeySequence>()));
    m_saveAction->setToolTip(isReadOnly() ? readOnlyReason()
            : !blocker.isEmpty()          ? blocker
            : m_nothingToChange ? tr("Nothing to change: the files are already laid out as planned")
                                : tr("Save the model with these options"));
    m_saveAsAction->setToolTip(
        blocker.isEmpty() ? tr("Save a copy elsewhere with these options") : blocker);
    m_openAction->setEnabled(!saving);
    m_reloadAction->setEnabled(!saving && m_models.hasModel());
    m_recentMenu->setEnabled(!saving);
    m_placementView->setEnabled(!saving && m_models.hasModel());
    m_exportPlanAction->setEnabled(canSave);
    m_importPlanAction->setEnabled(canSave);
}

void MainWindow::onSaved(const SaveOutcome& outcome)
{
    // The save rewrote the model's tensor index: rebuild every view from the snapshot the
    // worker took of it, and free the old rows off this thread.
    ModelSnapshot oldSnapshot = std::exchange(m_snapshot, outcome.snapshot);
    m_snapshot.path = QFileInfo(local(outcome.report.modelPath)).absoluteFilePath();
    // What is on disk now is the baseline: the fields stay as they made it (as they were when
    // the save started), for this model, and nothing moves until the user asks again.
    QVariantMap options = std::exchange(m_savingOptions, {});
    if (m_saveFlow->renamedDataFile()) // "Write … Instead"
        options.insert(
            QStringLiteral("repack/dataFile"), QString::fromStdString(m_saveFlow->request().data));
    options.remove(QStringLiteral("repack/keep"));
    rememberOptions(m_snapshot.path, options);
    m_panel->startFrom(options);
    showSnapshot(outcome.sameTensors);
    releaseInBackground(std::move(oldSnapshot));
    m_recent->add(m_snapshot.path);
    watchFiles();
}

void MainWindow::unwatchFiles()
{
    if (!m_watcher->files().isEmpty())
        m_watcher->removePaths(m_watcher->files());
}

void MainWindow::watchFiles()
{
    unwatchFiles();
    if (m_snapshot.remote)
        return; // nothing on disk to watch: a URL is read as it was when opened
    QStringList paths{m_snapshot.path};
    for (const repack::FileLayout& file : m_snapshot.layouts)
        paths << local(file.path);
    m_watcher->addPaths(paths);
}

void MainWindow::onFileChanged()
{
    if (isSaving() || isLoading() || m_askingReload || m_snapshot.path.isEmpty())
        return;
    askToReload();
}

void MainWindow::askToReload()
{
    m_askingReload = true;
    const auto answer = QMessageBox::question(this, tr("Model changed on disk"),
        tr("%1 or its data changed on disk. Reload it?").arg(displayName(m_snapshot.path))
            + (hasPendingWork() ? u' ' + tr("Your pins and changed options would be lost.")
                                : QString()),
        QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes);
    m_askingReload = false;
    if (answer == QMessageBox::Yes)
        startOpen(m_snapshot.path, false); // the files changed: no save over them first
    else
        watchFiles(); // a replaced file drops out of the watch list
}

QString MainWindow::readOnlyReason() const
{
    if (m_shipped)
        return tr("%1 is the sample Onnx Repack ships and is read-only: Save As… writes a copy "
                  "to work on")
            .arg(displayName(m_snapshot.path));
    return tr("%1 was opened from a URL and is read-only: Save As… writes a local copy")
        .arg(displayName(m_snapshot.path));
}

void MainWindow::about()
{
    showAbout(this);
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (m_saveFlow->isRunning()) {
        const auto answer = QMessageBox::question(
            this, tr("Save in progress"), tr("Cancel the save and close the window?"));
        if (answer != QMessageBox::Yes) {
            event->ignore();
            return;
        }
        cancelSave(); // a save waiting for the model's last reader stops at once
        saveJob()->waitForFinished();
    } else if (!mayLeave(tr("closing it"), [this, quitting = s_quitting] {
                   // Quit goes on with the other windows once this one is saved.
                   if (quitting)
                       quitAll();
                   else
                       close();
               })) {
        event->ignore();
        return;
    }
    QVariantMap values;
    values.insert(screenKey(QStringLiteral("window/geometry"), this), saveGeometry());
    values.insert(screenKey(QStringLiteral("window/state"), this), saveState());
    values.insert(screenKey(QStringLiteral("window/splitter"), this), m_splitter->saveState());
    values.insert(QStringLiteral("window/tableHeader"), m_table->horizontalHeader()->saveState());
    writeSettings(values);
    event->accept();
}

} // namespace ui
