#include "folder_window.h"

#include "about_box.h"
#include "main_window.h"
#include "open_windows.h"
#include "recent_files.h"
#include "ui/save/model_holder.h"
#include "ui/save/replace_dialog.h"
#include "ui/util/byte_format.h"
#include "ui/util/display_name.h"
#include "ui/util/shipped_files.h"
#include "ui/util/shown_lines.h"
#include "ui/util/wait_relay.h"
#include "ui/util/window_fit.h"
#include "ui/views/elided_label.h"
#include "ui/views/folder_map.h"
#include "ui/views/wait_label.h"

#include "core/inspect/folder_inspect.h"
#include "core/inspect/readers.h"
#include "core/io/hub_cache.h"
#include "core/io/source_spec.h"
#include "core/remote/model_source.h"
#include "core/save/folder_save.h"
#include "core/save/save_conflicts.h"

#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <atomic>
#include <numeric>

namespace ui {
namespace {

QTableWidget* makeTable(const QStringList& headers, QWidget* parent)
{
    auto* table = new QTableWidget(0, int(headers.size()), parent);
    table->setHorizontalHeaderLabels(headers);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    // Five panes share the window's height: each may shrink to its header and a few rows, so
    // the window fits a short screen (a laptop at 150 %).
    table->setMinimumHeight(table->fontMetrics().lineSpacing() * 4);
    return table;
}

// A cell whose full text is also its tooltip (long lists of graphs are cut by the column).
QTableWidgetItem* cell(const QString& text)
{
    auto* item = new QTableWidgetItem(text);
    item->setToolTip(text);
    return item;
}

QString joined(const std::vector<std::string>& items)
{
    QStringList out;
    for (const auto& item : items)
        out << QString::fromStdString(item);
    return out.join(QStringLiteral(", "));
}

QString loaders(const repack::FolderModel& m)
{
    if (!m.model)
        return FolderWindow::tr("does not load");
    QStringList refused;
    if (!m.loaders.onnx)
        refused << QStringLiteral("onnx");
    if (!m.loaders.onnxRuntime)
        refused << QStringLiteral("ONNX Runtime");
    if (!m.loaders.onnxIr)
        refused << QStringLiteral("onnx_ir");
    return refused.isEmpty()
        ? FolderWindow::tr("all accept")
        : FolderWindow::tr("refused by %1").arg(refused.join(QStringLiteral(", ")));
}

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

// The folder of the Hub `folder` reports, named at the commit its graphs were read at
// (hf://ORG/REPO@COMMIT/DIR/); empty when no graph pinned one (a folder without graphs).
QString pinnedFolder(const repack::FolderInspection& folder)
{
    const std::string name = folder.folder.string();
    const auto spec = repack::parseSource(name);
    const bool pinned
        = spec && spec->kind == repack::SourceSpec::Kind::Hub && repack::isCommit(spec->revision);
    return pinned ? QString::fromStdString(name) : QString();
}

} // namespace

// Written by the plan's job before it returns, so a save asked for meanwhile can wait for the
// job (JobTracker::waitForFinished) and read it without the delivery.
struct FolderWindow::Planned {
    QString name;
    std::atomic<bool> done{false};
    std::vector<std::filesystem::path> removed;
};

FolderWindow::FolderWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_cancelToken(std::make_shared<repack::CancelToken>())
    , m_permille(std::make_shared<std::atomic<int>>(0))
    , m_phase(std::make_shared<std::atomic<int>>(0))
{
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    m_summary = new QLabel(central);
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);

    auto* splitter = m_splitter = new QSplitter(Qt::Vertical, central);
    m_graphs = makeTable(
        {tr("Graph"), tr("Tensors"), tr("Inline"), tr("External"), tr("Data files"), tr("Loaders")},
        splitter);
    m_files = makeTable({tr("Data file"), tr("Size"), tr("Read by")}, splitter);
    m_map = new FolderMapView(splitter);
    m_shared = makeTable({tr("Size"), tr("Copies"), tr("Held by")}, splitter);
    m_shared->setToolTip(tr("Weights whose content (type, shape and bytes) more than one tensor "
                            "of the folder holds; copies beyond the first take space twice"));
    m_problems = makeTable({tr("Severity"), tr("Graph"), tr("Code"), tr("Message")}, splitter);
    layout->addWidget(splitter, 1);

    auto* shareRow = new QHBoxLayout;
    shareRow->addWidget(new QLabel(tr("One shared data file:"), central));
    m_sharedName = new QLineEdit(QStringLiteral("model.onnx_data"), central);
    m_sharedName->setObjectName(QStringLiteral("sharedName"));
    m_sharedName->setToolTip(tr("The data file every graph will read, each weight stored once"));
    // Room for a usual name whatever the status beside it says.
    m_sharedName->setMinimumWidth(
        m_sharedName->fontMetrics().horizontalAdvance(QStringLiteral("decoder_model.onnx_data"))
        + m_sharedName->fontMetrics().averageCharWidth() * 2);
    shareRow->addWidget(m_sharedName);
    // The savings said before a save, and in their place the save's progress: one row whose
    // widgets keep their size and place (Cancel moved 28 px when the bar took a row of its own).
    m_status = new QStackedWidget(central);
    m_savings = new ElidedLabel(m_status); // a long text never widens the window
    m_savings->setObjectName(QStringLiteral("savings"));
    m_savings->setTextInteractionFlags(Qt::TextSelectableByMouse); // a command to copy
    m_status->addWidget(m_savings);
    m_working = new QWidget(m_status);
    auto* workingRow = new QHBoxLayout(m_working);
    workingRow->setContentsMargins(0, 0, 0, 0);
    m_progress = new QProgressBar(m_working);
    m_progress->setObjectName(QStringLiteral("saveProgress"));
    m_progress->setRange(0, 1000);
    workingRow->addWidget(m_progress, 1);
    m_waiting = new WaitLabel(m_working);
    workingRow->addWidget(m_waiting, 1);
    m_waits = new WaitRelay(this);
    connect(m_waits, &WaitRelay::changed, m_waiting, &WaitLabel::setWaiting);
    m_status->addWidget(m_working);
    shareRow->addWidget(m_status, 1);
    m_save = new QPushButton(tr("Save Folder"), central);
    m_save->setObjectName(QStringLiteral("saveFolder"));
    m_localSaveTip = tr("Write every graph of the folder with the shared data file, in place, "
                        "crash-safe; the data files no model reads any more are removed");
    m_save->setToolTip(m_localSaveTip);
    shareRow->addWidget(m_save);
    m_saveCopy = new QPushButton(tr("Save a Local Copy…"), central);
    m_saveCopy->setObjectName(QStringLiteral("saveLocalCopy"));
    m_saveCopy->setToolTip(tr("Write every graph of this folder of the Hub into a local folder, "
                              "with the shared data file"));
    m_saveCopy->setEnabled(false);
    m_saveCopy->hide(); // a folder of the Hub only
    shareRow->addWidget(m_saveCopy);
    m_cancel = new QPushButton(tr("Cancel"), central);
    m_cancel->setObjectName(QStringLiteral("cancelSave"));
    m_cancel->setEnabled(false);
    shareRow->addWidget(m_cancel);
    layout->addLayout(shareRow);
    setCentralWidget(central);
    resize(900, 640);
    fitOnScreen(this); // the default size never past a small screen

    // A shared weight selected: the graphs that hold it are selected too.
    connect(m_shared, &QTableWidget::itemSelectionChanged, this, [this] {
        const auto rows = m_shared->selectionModel()->selectedRows();
        if (rows.isEmpty() || !m_folder)
            return;
        const repack::SharedContent& c = m_folder->shared.at(size_t(rows.front().row()));
        m_graphs->clearSelection();
        for (int r = 0; r < m_graphs->rowCount(); ++r)
            for (const repack::SharedTensor& t : c.tensors)
                if (m_graphs->item(r, 0)->text() == QString::fromStdString(t.model)) {
                    m_graphs->selectionModel()->select(m_graphs->model()->index(r, 0),
                        QItemSelectionModel::Select | QItemSelectionModel::Rows);
                    break;
                }
    });
    // A range of the map clicked: the graphs that hold its content are selected.
    connect(m_map, &FolderMapView::rangeClicked, this, [this](const std::vector<int>& holders) {
        m_graphs->clearSelection();
        for (int g : holders)
            if (g < m_graphs->rowCount())
                m_graphs->selectionModel()->select(m_graphs->model()->index(g, 0),
                    QItemSelectionModel::Select | QItemSelectionModel::Rows);
    });
    connect(m_save, &QPushButton::clicked, this, &FolderWindow::confirmAndSave);
    connect(m_saveCopy, &QPushButton::clicked, this, &FolderWindow::askAndSaveLocalCopy);
    connect(m_cancel, &QPushButton::clicked, this, &FolderWindow::cancel);
    connect(m_sharedName, &QLineEdit::textChanged, this, [this] { planSavings(); });
    connect(m_sharedName, &QLineEdit::textEdited, this, [this] { m_savedText.clear(); });
    createMenus();
    auto* poll = new QTimer(this);
    connect(poll, &QTimer::timeout, this, [this] {
        if (m_inspect.isRunning())
            showReading();
        if (!m_saving.isRunning())
            return;
        m_progress->setRange(0, 1000);
        m_progress->setValue(m_permille->load());
        // Each phase fills the bar on its own: the comparison of the weights, then the writing.
        const int phase = m_phase->load();
        m_progress->setFormat(phase == 1 ? tr("Comparing the weights… %p%")
                : phase == 2             ? tr("Writing %1… %p%").arg(m_savingName)
                                         : QStringLiteral("%p%"));
    });
    poll->start(100);
}

FolderWindow::~FolderWindow()
{
    // No job outlives the window: a save is cancelled, and each job still reading the folder
    // (the inspection, the plan of the savings) ends before the window is gone; the models
    // lent to a save go back to their windows, which load them again.
    m_cancelToken->cancel();
    m_saving.waitForFinished();
    giveBack(true);
    m_plan.waitForFinished();
    m_inspect.waitForFinished();
}

bool FolderWindow::isBusy() const
{
    return m_inspect.isRunning() || m_saving.isRunning() || m_pending.has_value();
}

void FolderWindow::createMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    m_saveAction = file->addAction(QIcon::fromTheme(QStringLiteral("document-save")),
        tr("&Save Folder"), this, &FolderWindow::confirmAndSave);
    m_saveAction->setShortcut(QKeySequence::Save);
    m_saveAction->setEnabled(false);
    m_saveCopyAction
        = file->addAction(tr("Save a &Local Copy…"), this, &FolderWindow::askAndSaveLocalCopy);
    m_saveCopyAction->setShortcut(QKeySequence::SaveAs);
    m_saveCopyAction->setEnabled(false);
    m_saveCopyAction->setVisible(false); // a folder of the Hub only
    file->addSeparator();
    QMenu* recentMenu = file->addMenu(tr("Open &Recent"));
    recentMenu->setObjectName(QStringLiteral("recentMenu"));
    auto* recent = new RecentFiles(recentMenu, this);
    // In a window of its own, as `onnx-repack-gui PATH` opens it: this one keeps its folder.
    connect(recent, &RecentFiles::openRequested, this, [this](const QString& path) {
        if (isRemoteName(path) && !namesFolder(path)) {
            auto* window = new MainWindow;
            window->setAttribute(Qt::WA_DeleteOnClose);
            window->show();
            window->openUrl(path);
            return;
        }
        openWindows({path});
    });
    file->addSeparator();
    QAction* close = file->addAction(tr("&Close"), this, &QWidget::close);
    close->setShortcut(QKeySequence::Close);
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Onnx Repack"), this, [this] { showAbout(this); });
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void FolderWindow::setBusy(bool busy, const QString& what)
{
    m_save->setEnabled(!busy && !m_dir.isEmpty() && !isReadOnly());
    m_saveCopy->setEnabled(!busy && !m_pinned.isEmpty());
    m_saveAction->setEnabled(m_save->isEnabled());
    m_saveCopyAction->setEnabled(m_saveCopy->isEnabled());
    m_sharedName->setEnabled(!busy);
    // Cancel stops a save, or the reading of a folder of the Hub (which a server may stall).
    const bool working
        = m_saving.isRunning() || m_pending.has_value() || (m_remote && m_inspect.isRunning());
    m_cancel->setEnabled(busy && working);
    m_status->setCurrentWidget(busy && working ? m_working : m_savings);
    if (!busy)
        m_waits->stop();
    if (!what.isEmpty())
        m_summary->setText(what);
}

void FolderWindow::showReading()
{
    const int permille = m_permille->load();
    if (permille < 0) {
        m_progress->setRange(0, 0); // busy: a listing or a graph's structure being fetched
        return;
    }
    m_progress->setRange(0, 1000);
    m_progress->setValue(permille);
    m_progress->setFormat(tr("Comparing the weights… %p%"));
}

void FolderWindow::openFolder(const QString& dir)
{
    // A URL is kept as given (the core reads it, with what its query may hold) and shown
    // without its query (shownName), as a model opened from a URL is.
    m_remote = isRemoteName(dir);
    m_dir = m_remote ? dir : QDir(dir).absolutePath();
    // A model there is in a folder the app ships (isShipped asks of a file's folder).
    m_shipped = !m_remote && isShipped(QDir(m_dir).filePath(QStringLiteral("model.onnx")));
    setWindowTitle(isReadOnly() ? tr("Folder %1 (read-only) — Onnx Repack").arg(displayName(m_dir))
                                : tr("Folder %1 — Onnx Repack").arg(displayName(m_dir)));
    m_save->setToolTip(isReadOnly() ? readOnlyReason() : m_localSaveTip);
    m_saveCopy->setVisible(m_remote);
    m_saveCopyAction->setVisible(m_remote);
    // The command a read-only folder names wraps to fit a 1024 px window (the savings of a
    // local one are one line, which keeps Cancel in place while a save runs).
    m_savings->setWordWrap(isReadOnly());
    m_pinned.clear();
    m_lastError.clear();
    m_readCancelled = false;
    if (m_inspect.isRunning())
        m_cancelToken->cancel(); // a reading superseded stops
    newCommand();
    m_permille->store(-1);
    showReading();
    const std::string path = m_dir.toStdString();
    m_inspect.start(
        [path, remote = m_remote, token = m_cancelToken, permille = m_permille] {
            repack::FolderInspectOptions options;
            options.cancel = token.get();
            options.progress = [permille](const repack::Progress& p) {
                if (p.bytesTotal)
                    permille->store(int(1000 * p.bytesDone / p.bytesTotal));
            };
            return std::make_shared<repack::Result<repack::FolderInspection>>(remote
                    ? repack::inspectRemoteFolder(path, options)
                    : repack::inspectFolder(path, options));
        },
        [this](std::shared_ptr<repack::Result<repack::FolderInspection>> result) {
            if (!*result) {
                setBusy(false, {});
                m_readCancelled = result->error().is(repack::ErrorKind::Cancelled);
                m_lastError
                    = m_readCancelled ? QString() : QString::fromStdString(result->error().message);
                m_summary->setText(m_readCancelled
                        ? tr("Reading %1 cancelled.").arg(shownName(m_dir))
                        : m_lastError);
                emit inspected(false);
                return;
            }
            fill(std::make_shared<const repack::FolderInspection>(std::move(**result)));
            setBusy(false, {}); // once the commit to copy is known
            planSavings();
            emit inspected(true);
        });
    setBusy(true, tr("Reading the graphs of %1…").arg(m_remote ? shownName(m_dir) : m_dir));
}

QString FolderWindow::readOnlyReason() const
{
    if (m_shipped)
        return tr("This is the folder of the sample Onnx Repack ships, which no save writes: "
                  "copy the folder elsewhere to save it.");
    return tr("A folder of the Hub is read-only; Save a Local Copy… writes it into a local folder "
              "(onnx-repack repack %1 -o DIR --shared-data %2)")
        .arg(m_pinned.isEmpty() ? shownName(m_dir) : m_pinned, m_sharedName->text().trimmed());
}

void FolderWindow::fill(const std::shared_ptr<const repack::FolderInspection>& folder)
{
    m_folder = folder;
    if (m_remote)
        m_pinned = pinnedFolder(*folder);
    // A folder of the Hub by the commit its graphs were read at.
    m_summary->setText(
        tr("%1: %2 graph(s), %3 data file(s); stored more than once: %4")
            .arg(m_remote ? QString::fromStdString(folder->folder.string()) : homePath(m_dir))
            .arg(folder->models.size())
            .arg(folder->files.size())
            .arg(formatBytes(folder->duplicatedBytes)));
    m_graphs->setRowCount(int(folder->models.size()));
    for (int r = 0; r < m_graphs->rowCount(); ++r) {
        const repack::FolderModel& m = folder->models[size_t(r)];
        const bool ok = m.model != nullptr;
        m_graphs->setItem(r, 0, cell(QString::fromStdString(m.name)));
        m_graphs->setItem(r, 1, cell(ok ? QString::number(m.tensors) : QStringLiteral("?")));
        m_graphs->setItem(r, 2, cell(ok ? formatBytes(m.inlineBytes) : QString()));
        m_graphs->setItem(r, 3, cell(ok ? formatBytes(m.externalBytes) : QString()));
        m_graphs->setItem(r, 4, cell(joined(m.files)));
        m_graphs->setItem(r, 5, cell(loaders(m)));
    }
    m_files->setRowCount(int(folder->files.size()));
    for (int r = 0; r < m_files->rowCount(); ++r) {
        const repack::FolderFile& f = folder->files[size_t(r)];
        m_files->setItem(r, 0, cell(QString::fromStdString(f.location)));
        m_files->setItem(r, 1, cell(formatBytes(f.bytes)));
        m_files->setItem(r, 2, cell(f.usedBy.empty() ? tr("no model") : joined(f.usedBy)));
    }
    m_map->setFolder(folder);
    // Graphs that already share one data file: that file, not a new default name (saving with
    // it writes nothing when its layout is kept).
    if (const std::string shared = repack::sharedDataFileOf(*folder); !shared.empty())
        if (m_sharedName->text() != QString::fromStdString(shared))
            m_sharedName->setText(QString::fromStdString(shared));
    m_shared->setRowCount(int(folder->shared.size()));
    for (int r = 0; r < m_shared->rowCount(); ++r) {
        const repack::SharedContent& c = folder->shared[size_t(r)];
        QStringList names;
        for (const repack::SharedTensor& t : c.tensors)
            names << QString::fromStdString(t.model + ":" + t.name);
        m_shared->setItem(r, 0, cell(formatBytes(c.bytes)));
        m_shared->setItem(r, 1, cell(QString::number(c.copies)));
        m_shared->setItem(r, 2, cell(names.join(QStringLiteral(", "))));
    }
    m_problems->setRowCount(int(folder->problems.size()));
    for (int r = 0; r < m_problems->rowCount(); ++r) {
        const repack::FolderProblem& p = folder->problems[size_t(r)];
        m_problems->setItem(
            r, 0, cell(QString::fromStdString(std::string(severityName(p.severity)))));
        m_problems->setItem(r, 1, cell(QString::fromStdString(p.model)));
        m_problems->setItem(r, 2, cell(QString::fromStdString(p.code)));
        m_problems->setItem(r, 3, cell(QString::fromStdString(p.message)));
    }
    for (QTableWidget* table : {m_graphs, m_files, m_shared, m_problems})
        table->resizeColumnsToContents();
    fitPanes();
}

void FolderWindow::fitPanes()
{
    // A table's header and its first `rows` rows, with the scroll bar below them if its columns
    // are wider than it.
    auto wanted = [](QTableWidget* table, int rows) {
        int height = table->horizontalHeader()->sizeHint().height() + 2 * table->frameWidth();
        for (int r = 0; r < std::min(table->rowCount(), rows); ++r)
            height += table->rowHeight(r);
        if (table->horizontalHeader()->length() > table->viewport()->width())
            height += table->horizontalScrollBar()->sizeHint().height();
        return std::max(height, table->minimumHeight());
    };
    const QList<int> sizes = m_splitter->sizes();
    const int total = std::accumulate(sizes.cbegin(), sizes.cend(), 0);
    // The graphs and their files first, whole up to six rows each; the shared weights and the
    // problems up to three rows each from what the map's minimum leaves; the map the rest.
    const int graphs = wanted(m_graphs, 6);
    const int files = wanted(m_files, 6);
    const int rest = total - graphs - files - m_map->minimumSizeHint().height();
    const int shared = std::clamp(rest / 2, m_shared->minimumHeight(),
        std::max(m_shared->minimumHeight(), wanted(m_shared, 3)));
    const int problems = std::clamp(rest - shared, m_problems->minimumHeight(),
        std::max(m_problems->minimumHeight(), wanted(m_problems, 3)));
    const int map
        = std::max(m_map->minimumSizeHint().height(), total - graphs - files - shared - problems);
    m_splitter->setSizes({graphs, files, map, shared, problems});
    // The last column takes the width a vertical scroll bar no longer does: set anew, the
    // stretch is measured again.
    for (QTableWidget* table : {m_graphs, m_files, m_shared, m_problems}) {
        table->horizontalHeader()->setStretchLastSection(false);
        table->horizontalHeader()->setStretchLastSection(true);
    }
}

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
