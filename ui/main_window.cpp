#include "main_window.h"

#include "background.h"
#include "byte_format.h"
#include "layout_map_view.h"
#include "problems_model.h"
#include "recent_files.h"
#include "repack_panel.h"
#include "save_job.h"
#include "save_preview.h"
#include "settings_store.h"
#include "size_bar_delegate.h"
#include "summary_strip.h"
#include "tensor_filter_proxy.h"
#include "tensor_table_model.h"

#include "core/model.h"
#include "core/save.h"
#include "core/save_plan.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace ui {
namespace {

QString local(const std::filesystem::path& path)
{
    return QString::fromStdString(path.string());
}

QStringList droppedModels(const QMimeData* mime)
{
    QStringList paths;
    if (!mime || !mime->hasUrls())
        return paths;
    for (const QUrl& url : mime->urls()) {
        if (url.isLocalFile()
            && url.toLocalFile().endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive))
            paths << url.toLocalFile();
    }
    return paths;
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_tensorModel(new TensorTableModel(this))
    , m_proxy(new TensorFilterProxy(this))
    , m_problemsModel(new ProblemsModel(this))
    , m_filterTimer(new QTimer(this))
    , m_previewTimer(new QTimer(this))
    , m_changeTimer(new QTimer(this))
    , m_watcher(new QFileSystemWatcher(this))
    , m_loadWatcher(new QFutureWatcher<LoadedModel>(this))
    , m_saveJob(new SaveJob(this))
{
    setAcceptDrops(true);
    setWindowIcon(QIcon(QStringLiteral(":/icons/onnx-repack-gui.svg")));
    m_proxy->setSourceModel(m_tensorModel);
    createWidgets();
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

    connect(m_loadWatcher, &QFutureWatcher<LoadedModel>::finished, this, &MainWindow::onLoaded);
    connect(m_saveJob, &SaveJob::progressChanged, this, &MainWindow::onSaveProgress);
    connect(m_saveJob, &SaveJob::finished, this, &MainWindow::onSaveFinished);
    connect(m_map, &LayoutMapView::hiddenTensorClicked, this, [this](int tensor) {
        clearFilters();
        selectTensor(tensor);
    });

    m_panel->restoreSettings(settingsIn(QStringLiteral("repack")));
    if (!restoreGeometry(setting(QStringLiteral("window/geometry")).toByteArray()))
        resize(1360, 860);
    restoreState(setting(QStringLiteral("window/state")).toByteArray());
    m_splitter->restoreState(setting(QStringLiteral("window/splitter")).toByteArray());
    updateTitle();
    setBusy({});
}

MainWindow::~MainWindow() = default;

void MainWindow::createWidgets()
{
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(6, 4, 6, 0);
    layout->setSpacing(4);

    m_summary = new SummaryStrip(central);
    layout->addWidget(m_summary);

    auto* filterRow = new QHBoxLayout;
    m_filter = new QLineEdit(central);
    m_filter->setPlaceholderText(tr("Filter by name or scope (Ctrl+F)"));
    m_filter->setClearButtonEnabled(true);
    m_storageFilter = new QComboBox(central);
    m_storageFilter->addItems(
        {tr("All tensors"), tr("Inline"), tr("External"), tr("With problems")});
    filterRow->addWidget(m_filter, 1);
    filterRow->addWidget(m_storageFilter);
    layout->addLayout(filterRow);

    m_table = new QTableView(central);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder); // declaration order until the user sorts
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->setShowGrid(false);
    m_table->setTextElideMode(Qt::ElideMiddle);
    // Fixed row heights and column widths: nothing is measured per row, so 100,000 rows stay fast.
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->verticalHeader()->hide();
    QHeaderView* header = m_table->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setStretchLastSection(true);
    header->setHighlightSections(false);
    const int widths[TensorTableModel::ColumnCount] = {180, 170, 72, 62, 84, 96, 124, 66, 66, 80};
    for (int c = 0; c < TensorTableModel::ColumnCount; ++c)
        header->resizeSection(c, widths[c]);
    m_table->setItemDelegateForColumn(TensorTableModel::Size,
        new SizeBarDelegate(TensorTableModel::SortRole, TensorTableModel::MaxRole, m_table));

    m_map = new LayoutMapView(central);
    m_map->setSelectionModel(m_table->selectionModel(), m_proxy);

    m_splitter = new QSplitter(Qt::Vertical, central);
    m_splitter->addWidget(m_table);
    m_splitter->addWidget(m_map);
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 1);
    m_splitter->setChildrenCollapsible(false);
    m_splitter->setSizes({480, 170});
    layout->addWidget(m_splitter, 1);
    setCentralWidget(central);

    m_panel = new RepackPanel(this);
    auto* repackDock = new QDockWidget(tr("Repack"), this);
    repackDock->setObjectName(QStringLiteral("repackDock"));
    repackDock->setWidget(m_panel);
    repackDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::RightDockWidgetArea, repackDock);

    m_problemsView = new QTableView(this);
    m_problemsView->setModel(m_problemsModel);
    m_problemsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_problemsView->setWordWrap(false);
    m_problemsView->setShowGrid(false);
    m_problemsView->verticalHeader()->hide();
    m_problemsView->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_problemsView->verticalHeader()->setDefaultSectionSize(
        m_problemsView->fontMetrics().height() + 6);
    m_problemsView->horizontalHeader()->setStretchLastSection(true);
    m_problemsView->horizontalHeader()->resizeSection(ProblemsModel::Severity, 90);
    m_problemsView->horizontalHeader()->resizeSection(ProblemsModel::Tensor, 220);
    m_problemsView->horizontalHeader()->resizeSection(ProblemsModel::Code, 140);
    connect(m_problemsView, &QTableView::activated, this, [this](const QModelIndex& index) {
        const int tensor = index.data(ProblemsModel::TensorIndexRole).toInt();
        if (tensor >= 0) {
            clearFilters();
            selectTensor(tensor);
        }
    });
    auto* problemsDock = new QDockWidget(tr("Problems"), this);
    problemsDock->setObjectName(QStringLiteral("problemsDock"));
    problemsDock->setWidget(m_problemsView);
    addDockWidget(Qt::BottomDockWidgetArea, problemsDock);
    resizeDocks({problemsDock}, {110}, Qt::Vertical);
    resizeDocks({repackDock}, {330}, Qt::Horizontal);

    m_progressLabel = new QLabel(this);
    m_progress = new QProgressBar(this);
    m_progress->setMaximumWidth(220);
    m_progress->setTextVisible(true);
    m_cancel = new QPushButton(tr("Cancel"), this);
    connect(m_cancel, &QPushButton::clicked, this, &MainWindow::cancelSave);
    statusBar()->addPermanentWidget(m_progressLabel);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
}

void MainWindow::createActions()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    m_openAction = file->addAction(
        QIcon::fromTheme(QStringLiteral("document-open")), tr("&Open…"), this, &MainWindow::open);
    m_openAction->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    m_recent = new RecentFiles(m_recentMenu, this);
    connect(m_recent, &RecentFiles::openRequested, this,
        [this](const QString& path) { openFile(path); });
    m_reloadAction = file->addAction(
        QIcon::fromTheme(QStringLiteral("view-refresh")), tr("Re&load"), this, &MainWindow::reload);
    m_reloadAction->setShortcut(QKeySequence::Refresh);
    file->addSeparator();
    m_saveAction = file->addAction(
        QIcon::fromTheme(QStringLiteral("document-save")), tr("&Save"), this, &MainWindow::save);
    m_saveAction->setShortcut(QKeySequence::Save);
    m_saveAsAction = file->addAction(QIcon::fromTheme(QStringLiteral("document-save-as")),
        tr("Save &As…"), this, &MainWindow::saveAs);
    m_saveAsAction->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    QAction* close = file->addAction(tr("&Close Window"), this, &QWidget::close);
    close->setShortcut(QKeySequence::Close);
    QAction* quit = file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* copy = edit->addAction(tr("&Copy Tensor Names"), this, &MainWindow::copyNames);
    copy->setShortcut(QKeySequence::Copy);
    QAction* selectAll = edit->addAction(tr("Select &All"), m_table, &QTableView::selectAll);
    selectAll->setShortcut(QKeySequence::SelectAll);
    QAction* find = edit->addAction(tr("&Find…"), this, [this] {
        m_filter->setFocus();
        m_filter->selectAll();
    });
    find->setShortcut(QKeySequence::Find);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    QAction* fit = view->addAction(tr("Zoom Map to &Fit"), m_map, &LayoutMapView::zoomToFit);
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    QAction* zoomIn = view->addAction(tr("Zoom Map &In"), this,
        [this] { m_map->setZoom(m_map->zoom() * 2, m_map->viewport()->width() / 2); });
    zoomIn->setShortcut(QKeySequence::ZoomIn);
    QAction* zoomOut = view->addAction(tr("Zoom Map &Out"), this,
        [this] { m_map->setZoom(m_map->zoom() / 2, m_map->viewport()->width() / 2); });
    zoomOut->setShortcut(QKeySequence::ZoomOut);
    view->addSeparator();
    for (QDockWidget* dock : findChildren<QDockWidget*>())
        view->addAction(dock->toggleViewAction());

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Onnx Repack"), this, &MainWindow::about);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);

    m_panel->addButtons({m_saveAction, m_saveAsAction});
}

bool MainWindow::openFile(const QString& path, bool quiet)
{
    if (isSaving())
        return false;
    // Parsing and indexing 100,000 tensors takes longer than a frame: the window keeps
    // painting and answering meanwhile, and shows the current model until the new one is in.
    // A newer open replaces the watched future, so an older result never arrives.
    m_loadingPath = path;
    m_loadQuiet = quiet;
    setBusy(tr("Opening %1…").arg(QFileInfo(path).fileName()));
    m_loadWatcher->setFuture(QtConcurrent::run(loadModel, path));
    return true;
}

void MainWindow::onLoaded()
{
    // Taken, not copied: the future keeps no reference that could free the model here later.
    const LoadedModel loaded = m_loadWatcher->future().takeResult();
    const bool quiet = m_loadQuiet;
    m_loadingPath.clear();
    setBusy({});
    if (!loaded.model) {
        m_lastError = loaded.error;
        statusBar()->showMessage(tr("Cannot open %1").arg(loaded.path), 8000);
        if (!quiet)
            QMessageBox::warning(this, tr("Cannot open model"), m_lastError);
        Q_EMIT openFailed(loaded.path, loaded.error);
        return;
    }
    m_lastError.clear();
    // The old model and rows are freed off this thread once nothing here refers to them.
    std::shared_ptr<repack::Model> oldModel = std::exchange(m_model, loaded.model);
    ModelSnapshot oldSnapshot = std::exchange(m_snapshot, loaded.snapshot);
    showSnapshot();
    releaseInBackground(std::make_pair(std::move(oldModel), std::move(oldSnapshot)));
    m_recent->add(m_snapshot.path);
    watchFiles();
    statusBar()->showMessage(tr("Opened %1: %n tensor(s)", nullptr, int(m_snapshot.tensors.size()))
                                 .arg(QFileInfo(m_snapshot.path).fileName()),
        5000);
    Q_EMIT modelOpened(m_snapshot.path);
}

void MainWindow::showSnapshot(bool sameTensors)
{
    if (sameTensors)
        m_tensorModel->updateStorage(m_snapshot);
    else
        m_tensorModel->setSnapshot(m_snapshot);
    m_problemsModel->setSnapshot(m_snapshot);
    m_summary->setSnapshot(m_snapshot);
    m_map->setSnapshot(m_snapshot);
    if (auto* dock = qobject_cast<QDockWidget*>(m_problemsView->parentWidget())) {
        const int errors = m_problemsModel->errorCount();
        const int count = m_problemsModel->rowCount();
        dock->setWindowTitle(count
                ? tr("Problems (%1 errors, %2 warnings)").arg(errors).arg(count - errors)
                : tr("Problems (none)"));
    }
    m_panel->setDefaultDataFile(QFileInfo(m_snapshot.path).fileName() + QStringLiteral(".data"));
    updateTitle();
    updatePreview();
    updateActions();
}

void MainWindow::updateTitle()
{
    setWindowTitle(m_snapshot.path.isEmpty()
            ? tr("Onnx Repack")
            : QFileInfo(m_snapshot.path).fileName() + QStringLiteral(" — Onnx Repack"));
    setWindowFilePath(m_snapshot.path);
}

void MainWindow::updatePreview()
{
    // The worker owns the model while it saves.
    if (!m_model || isSaving() || isLoading())
        return;
    const QString invalid = m_panel->validationError();
    if (!invalid.isEmpty()) {
        m_panel->setPreview(tr("Cannot save: %1").arg(invalid), true);
        return;
    }
    auto plan = repack::planSave(*m_model, m_snapshot.path.toStdString(), m_panel->options());
    if (!plan) {
        m_panel->setPreview(
            tr("Cannot save: %1").arg(QString::fromStdString(plan.error().message)), true);
        return;
    }
    m_panel->setPreview(describePlan(plan.value(), m_snapshot));
}

void MainWindow::open()
{
    const QString start
        = m_snapshot.path.isEmpty() ? QString() : QFileInfo(m_snapshot.path).absolutePath();
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
    if (!m_snapshot.path.isEmpty())
        saveTo(m_snapshot.path);
}

void MainWindow::saveAs()
{
    if (!m_model)
        return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save Model As"), m_snapshot.path, tr("ONNX models (*.onnx)"));
    if (!path.isEmpty())
        saveTo(path);
}

bool MainWindow::saveTo(const QString& path)
{
    // While a model loads, the one shown is about to be replaced.
    if (!m_model || isSaving() || isLoading())
        return false;
    const QString invalid = m_panel->validationError();
    if (!invalid.isEmpty()) {
        QMessageBox::warning(this, tr("Cannot save"), invalid);
        return false;
    }
    writeSettings(m_panel->settingValues());
    return startSave(path, m_panel->options());
}

bool MainWindow::startSave(const QString& path, repack::SaveOptions options)
{
    // Our own writes are not "changed on disk" by someone else.
    if (!m_watcher->files().isEmpty())
        m_watcher->removePaths(m_watcher->files());
    if (!m_saveJob->start(*m_model, path, std::move(options), m_snapshot.tensors))
        return false;
    setBusy(tr("Saving %1…").arg(QFileInfo(path).fileName()));
    return true;
}

bool MainWindow::isSaving() const
{
    return m_saveJob->isRunning();
}

void MainWindow::cancelSave()
{
    m_saveJob->cancel();
    m_progressLabel->setText(tr("Cancelling…"));
}

void MainWindow::setBusy(const QString& what)
{
    // An indefinite bar until a save reports its first bytes; Cancel only for saves.
    m_progressLabel->setText(what);
    m_progressLabel->setVisible(!what.isEmpty());
    m_progress->setVisible(!what.isEmpty());
    m_progress->setRange(0, 0);
    m_cancel->setVisible(isSaving());
    updateActions();
}

void MainWindow::updateActions()
{
    const bool saving = isSaving();
    m_panel->setEnabled(!saving);
    const bool canSave = !saving && !isLoading() && m_model;
    m_saveAction->setEnabled(canSave);
    m_saveAsAction->setEnabled(canSave);
    m_openAction->setEnabled(!saving);
    m_reloadAction->setEnabled(!saving && m_model);
    m_recentMenu->setEnabled(!saving);
}

void MainWindow::onSaveProgress(quint64 done, quint64 total, const QString& tensor)
{
    if (total == 0)
        return;
    // Per mille: QProgressBar takes ints, files may pass 2 GiB.
    m_progress->setRange(0, 1000);
    m_progress->setValue(int(1000.0 * double(done) / double(total)));
    m_progress->setFormat(formatBytes(done) + QStringLiteral(" / ") + formatBytes(total));
    if (!tensor.isEmpty())
        m_progressLabel->setText(tr("Writing %1").arg(tensor));
}

void MainWindow::onSaveFinished(const SaveOutcome& outcome)
{
    setBusy({});
    if (!outcome.foreignFiles.empty()) {
        // Nothing was written: the worker found files the model does not use in the way.
        QStringList names;
        for (const auto& file : outcome.foreignFiles)
            names << local(file);
        const auto answer = QMessageBox::question(this, tr("Overwrite data file?"),
            tr("Saving will overwrite files that this model does not use (they may belong to "
               "another model):\n\n%1\n\nOverwrite them?")
                .arg(names.join(u'\n')),
            QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
        repack::SaveOptions options = outcome.options;
        options.force = true;
        if (answer == QMessageBox::Yes && startSave(outcome.path, std::move(options)))
            return;
        watchFiles();
        statusBar()->showMessage(tr("Not saved; the files on disk are unchanged."), 8000);
        Q_EMIT saveFinished(false);
        return;
    }
    if (!outcome.ok) {
        watchFiles();
        updatePreview();
        if (outcome.cancelled)
            statusBar()->showMessage(tr("Save cancelled; the files on disk are unchanged."), 8000);
        else
            QMessageBox::critical(this, tr("Save failed"),
                tr("The model was not saved; the files on disk are unchanged.\n\n%1")
                    .arg(outcome.error));
        Q_EMIT saveFinished(false);
        return;
    }
    // The save rewrote the model's tensor index: rebuild every view from the snapshot the
    // worker took of it, and free the old rows off this thread.
    ModelSnapshot oldSnapshot = std::exchange(m_snapshot, outcome.snapshot);
    m_snapshot.path = QFileInfo(local(outcome.report.modelPath)).absoluteFilePath();
    showSnapshot(outcome.sameTensors);
    releaseInBackground(std::move(oldSnapshot));
    m_recent->add(m_snapshot.path);
    watchFiles();
    QStringList written{QFileInfo(local(outcome.report.modelPath)).fileName()};
    for (const auto& file : outcome.report.dataFiles)
        written << QFileInfo(local(file)).fileName();
    statusBar()->showMessage(
        tr("Saved %1: %2 written in %3 s (%4 external, %5 inline tensors)")
            .arg(written.join(QStringLiteral(", ")), formatBytes(outcome.report.bytesWritten))
            .arg(outcome.seconds, 0, 'f', 2)
            .arg(outcome.report.externalTensors)
            .arg(outcome.report.inlineTensors));
    Q_EMIT saveFinished(true);
}

void MainWindow::watchFiles()
{
    if (!m_watcher->files().isEmpty())
        m_watcher->removePaths(m_watcher->files());
    QStringList paths{m_snapshot.path};
    for (const repack::FileLayout& file : m_snapshot.layouts)
        paths << local(file.path);
    m_watcher->addPaths(paths);
}

void MainWindow::onFileChanged()
{
    if (isSaving() || isLoading() || m_askingReload || m_snapshot.path.isEmpty())
        return;
    m_askingReload = true;
    const auto answer = QMessageBox::question(this, tr("Model changed on disk"),
        tr("%1 or its data changed on disk. Reload it?").arg(QFileInfo(m_snapshot.path).fileName()),
        QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes);
    m_askingReload = false;
    if (answer == QMessageBox::Yes)
        reload();
    else
        watchFiles(); // a replaced file drops out of the watch list
}

void MainWindow::clearFilters()
{
    m_filter->clear();
    m_filterTimer->stop();
    m_storageFilter->setCurrentIndex(0);
    // Set on the proxy too: the widgets may already show "no filter" while tests set it directly.
    m_proxy->setText({});
    m_proxy->setStorageFilter(TensorFilterProxy::StorageFilter::All);
}

void MainWindow::selectTensor(int tensor)
{
    const QModelIndex row = m_proxy->mapFromSource(m_tensorModel->index(tensor, 0));
    if (!row.isValid())
        return;
    m_table->selectionModel()->setCurrentIndex(
        row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_table->scrollTo(row);
}

QString MainWindow::selectedNames() const
{
    QModelIndexList rows = m_table->selectionModel()->selectedRows(TensorTableModel::Name);
    std::sort(rows.begin(), rows.end(),
        [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
    QStringList names;
    names.reserve(rows.size());
    for (const QModelIndex& row : rows)
        names << row.data().toString();
    return names.join(u'\n');
}

void MainWindow::copyNames()
{
    const QString names = selectedNames();
    if (!names.isEmpty())
        QGuiApplication::clipboard()->setText(names);
}

void MainWindow::about()
{
    QMessageBox::about(this, tr("About Onnx Repack"),
        tr("<h3>Onnx Repack %1</h3><p>See where every tensor of an ONNX model lives, "
           "and rewrite inline and external storage safely.</p>")
            .arg(QStringLiteral(REPACK_VERSION)));
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (!isSaving() && !droppedModels(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QStringList paths = droppedModels(event->mimeData());
    if (paths.isEmpty() || isSaving())
        return;
    event->acceptProposedAction();
    openFile(paths.constFirst());
    // Further models each get a window of their own.
    for (qsizetype i = 1; i < paths.size(); ++i) {
        auto* window = new MainWindow;
        window->setAttribute(Qt::WA_DeleteOnClose);
        window->show();
        window->openFile(paths[i]);
    }
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (isSaving()) {
        const auto answer = QMessageBox::question(
            this, tr("Save in progress"), tr("Cancel the save and close the window?"));
        if (answer != QMessageBox::Yes) {
            event->ignore();
            return;
        }
        m_saveJob->cancel();
        m_saveJob->waitForFinished();
    }
    QVariantMap values = m_panel->settingValues();
    values.insert(QStringLiteral("window/geometry"), saveGeometry());
    values.insert(QStringLiteral("window/state"), saveState());
    values.insert(QStringLiteral("window/splitter"), m_splitter->saveState());
    writeSettings(values);
    event->accept();
}

} // namespace ui
