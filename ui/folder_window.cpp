#include "folder_window.h"

#include "byte_format.h"
#include "folder_map.h"

#include "core/inspect/folder_inspect.h"
#include "core/save/folder_save.h"

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QShortcut>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <atomic>

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

struct SaveOutcome {
    repack::Result<repack::FolderSaveReport> report = repack::Error::internal("not run");
};

} // namespace

FolderWindow::FolderWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_cancelToken(std::make_shared<repack::CancelToken>())
    , m_permille(std::make_shared<std::atomic<int>>(0))
{
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    m_summary = new QLabel(central);
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);

    auto* splitter = new QSplitter(Qt::Vertical, central);
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
    m_sharedName->setToolTip(tr("The data file every graph will read, each weight stored once"));
    shareRow->addWidget(m_sharedName);
    m_savings = new QLabel(central);
    shareRow->addWidget(m_savings, 1);
    m_save = new QPushButton(tr("Save Folder"), central);
    m_save->setToolTip(tr("Write every graph of the folder with the shared data file, in place, "
                          "crash-safe; the data files no model reads any more are removed"));
    shareRow->addWidget(m_save);
    m_cancel = new QPushButton(tr("Cancel"), central);
    m_cancel->setEnabled(false);
    shareRow->addWidget(m_cancel);
    layout->addLayout(shareRow);
    m_progress = new QProgressBar(central);
    m_progress->setRange(0, 1000);
    m_progress->hide();
    layout->addWidget(m_progress);
    setCentralWidget(central);
    resize(900, 640);

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
    connect(m_save, &QPushButton::clicked, this, [this] { saveShared(m_sharedName->text()); });
    connect(m_cancel, &QPushButton::clicked, this, &FolderWindow::cancel);
    connect(m_sharedName, &QLineEdit::textChanged, this, [this] { planSavings(); });
    auto* close = new QShortcut(QKeySequence::Close, this);
    connect(close, &QShortcut::activated, this, &QWidget::close);
    auto* poll = new QTimer(this);
    connect(poll, &QTimer::timeout, this, [this] {
        if (m_saving.isRunning())
            m_progress->setValue(m_permille->load());
    });
    poll->start(100);
}

FolderWindow::~FolderWindow()
{
    // No job outlives the window: a save is cancelled, and each job still reading the folder
    // (the inspection, the plan of the savings) ends before the window is gone.
    m_cancelToken->cancel();
    m_saving.waitForFinished();
    m_plan.waitForFinished();
    m_inspect.waitForFinished();
}

bool FolderWindow::isBusy() const
{
    return m_inspect.isRunning() || m_saving.isRunning();
}

void FolderWindow::setBusy(bool busy, const QString& what)
{
    m_save->setEnabled(!busy && !m_dir.isEmpty());
    m_sharedName->setEnabled(!busy);
    m_cancel->setEnabled(busy && m_saving.isRunning());
    m_progress->setVisible(busy && m_saving.isRunning());
    if (!what.isEmpty())
        m_summary->setText(what);
}

void FolderWindow::openFolder(const QString& dir)
{
    m_dir = QDir(dir).absolutePath();
    setWindowTitle(tr("%1 (folder) — Onnx Repack").arg(QFileInfo(m_dir).fileName()));
    setBusy(true, tr("Reading the graphs of %1…").arg(m_dir));
    const std::string path = m_dir.toStdString();
    m_inspect.start(
        [path] {
            return std::make_shared<repack::Result<repack::FolderInspection>>(
                repack::inspectFolder(path));
        },
        [this](std::shared_ptr<repack::Result<repack::FolderInspection>> result) {
            setBusy(false, {});
            if (!*result) {
                m_lastError = QString::fromStdString(result->error().message);
                m_summary->setText(m_lastError);
                emit inspected(false);
                return;
            }
            fill(std::make_shared<const repack::FolderInspection>(std::move(**result)));
            planSavings();
            emit inspected(true);
        });
}

void FolderWindow::fill(const std::shared_ptr<const repack::FolderInspection>& folder)
{
    m_folder = folder;
    m_summary->setText(tr("%1: %2 graph(s), %3 data file(s); stored more than once: %4")
                           .arg(m_dir)
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
}

// What a shared save would give, planned on a worker (nothing is written).
void FolderWindow::planSavings()
{
    const QString name = m_sharedName->text().trimmed();
    if (m_dir.isEmpty() || name.isEmpty()) {
        m_savings->clear();
        return;
    }
    const std::string dir = m_dir.toStdString();
    repack::FolderSaveOptions options;
    options.sharedData = name.toStdString();
    options.dryRun = true;
    m_plan.start(
        [dir, options] {
            return std::make_shared<repack::Result<repack::FolderSaveReport>>(
                repack::saveFolder(dir, dir, options));
        },
        [this](std::shared_ptr<repack::Result<repack::FolderSaveReport>> plan) {
            if (!*plan) {
                m_savings->setText(QString::fromStdString(plan->error().message));
                m_savings->setToolTip(m_savings->text());
                return;
            }
            const repack::FolderSaveReport& r = **plan;
            QString text = r.unchanged
                ? tr("nothing to change")
                : tr("%1 now, %2 after (%3 distinct weights)")
                      .arg(formatBytes(r.bytesBefore), formatBytes(r.bytesAfter))
                      .arg(r.sharedRanges);
            if (!r.consentNeeded.empty())
                text += tr("; replaces a file other models read");
            m_savings->setText(text);
            m_savings->setToolTip(QString::fromStdString(r.consentNeeded));
        });
}

void FolderWindow::saveShared(const QString& name)
{
    if (m_dir.isEmpty() || isBusy())
        return;
    m_cancelToken = std::make_shared<repack::CancelToken>();
    m_permille->store(0);
    const std::string dir = m_dir.toStdString();
    auto options = std::make_shared<repack::FolderSaveOptions>();
    options->sharedData = name.trimmed().toStdString();
    options->controls.cancel = m_cancelToken.get();
    auto permille = m_permille;
    options->controls.progress = [permille](const repack::Progress& p) {
        if (p.bytesTotal)
            permille->store(int(1000 * p.bytesDone / p.bytesTotal));
    };
    auto token = m_cancelToken; // kept alive by the job as long as it runs
    m_saving.start(
        [dir, options, token] {
            auto outcome = std::make_shared<SaveOutcome>();
            outcome->report = repack::saveFolder(dir, dir, *options);
            return outcome;
        },
        [this](std::shared_ptr<SaveOutcome> outcome) {
            setBusy(false, {});
            const bool ok = bool(outcome->report);
            m_lastError = ok ? QString() : QString::fromStdString(outcome->report.error().message);
            openFolder(m_dir); // the folder as it is now, whatever happened
            if (!ok)
                m_summary->setText(m_lastError);
            emit saved(ok);
        });
    setBusy(true, tr("Saving the graphs of %1 with %2…").arg(m_dir, name));
}

void FolderWindow::cancel()
{
    m_cancelToken->cancel();
}

} // namespace ui
