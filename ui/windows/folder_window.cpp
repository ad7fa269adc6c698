#include "folder_window.h"

#include "about_box.h"
#include "main_window.h"
#include "open_windows.h"
#include "recent_files.h"
#include "ui/save/model_holder.h"
#include "ui/util/byte_format.h"
#include "ui/util/display_name.h"
#include "ui/util/shipped_files.h"
#include "ui/util/wait_relay.h"
#include "ui/util/window_fit.h"
#include "ui/views/elided_label.h"
#include "ui/views/folder_map.h"
#include "ui/views/wait_label.h"

#include "core/inspect/folder_inspect.h"
#include "core/io/hub_cache.h"
#include "core/io/source_spec.h"
#include "core/remote/model_source.h"
#include "core/save/folder_save.h"

#include <QApplication>
#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
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

FolderWindow::FolderWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_cancelToken(std::make_shared<repack::CancelToken>())
    , m_permille(std::make_shared<std::atomic<int>>(0))
    , m_phase(std::make_shared<std::atomic<int>>(0))
{
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    createPanes(central, layout);
    layout->addLayout(createSaveRow(central));
    setCentralWidget(central);
    resize(900, 640);
    fitOnScreen(this); // the default size never past a small screen

    connectSelections();
    connect(m_save, &QPushButton::clicked, this, &FolderWindow::confirmAndSave);
    connect(m_saveCopy, &QPushButton::clicked, this, &FolderWindow::askAndSaveLocalCopy);
    connect(m_cancel, &QPushButton::clicked, this, &FolderWindow::cancel);
    connect(m_sharedName, &QLineEdit::textChanged, this, [this] { planSavings(); });
    connect(m_sharedName, &QLineEdit::textEdited, this, [this] { m_savedText.clear(); });
    createMenus();
    startPolling();
}

void FolderWindow::createPanes(QWidget* central, QVBoxLayout* layout)
{
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
}

QHBoxLayout* FolderWindow::createSaveRow(QWidget* central)
{
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
    // widgets keep their size and place (Cancel moved when the bar took a row of its own).
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
    return shareRow;
}

void FolderWindow::connectSelections()
{
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
}

void FolderWindow::startPolling()
{
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

} // namespace ui
