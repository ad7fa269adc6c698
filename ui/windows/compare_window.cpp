#include "compare_window.h"

#include "ui/models/diff_table_model.h"
#include "ui/models/model_snapshot.h"
#include "ui/util/background.h"
#include "ui/util/byte_format.h"
#include "ui/util/display_name.h"
#include "ui/util/wait_relay.h"
#include "ui/util/window_fit.h"
#include "ui/views/large_table.h"
#include "ui/views/layout_diff_view.h"
#include "ui/views/layout_palette.h"
#include "ui/views/wait_label.h"

#include "core/inspect/diff.h"
#include "core/model/model.h"
#include "core/plan/file_layout.h"
#include "core/remote/model_source.h"

#include <QAction>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QVBoxLayout>

#include <atomic>

namespace ui {

struct CompareWindow::Shared {
    repack::CancelToken cancel;
    std::atomic<uint64_t> done{0};
    std::atomic<uint64_t> total{0};
};

struct CompareWindow::Loaded {
    std::shared_ptr<repack::Model> a;
    std::shared_ptr<repack::Model> b;
    std::shared_ptr<LayoutDiff> diff;
    QString error;
};

struct CompareWindow::Compared {
    std::shared_ptr<LayoutDiff> diff;
    std::vector<int> changed;
    QString error;
};

namespace {

constexpr ChangeKind kFilterKinds[][2] = {
    {ChangeKind::Added, ChangeKind::Added},
    {ChangeKind::Removed, ChangeKind::Removed},
    {ChangeKind::Moved, ChangeKind::NewFile},
    {ChangeKind::ToInline, ChangeKind::ToExternal},
    {ChangeKind::ContentChanged, ChangeKind::ContentChanged},
    {ChangeKind::Unchanged, ChangeKind::Unchanged},
};

QString qs(const std::string& text)
{
    return QString::fromStdString(text);
}

// What compareDiff reads of a snapshot, and only that: names, where each tensor is, the file
// layouts. A third of takeSnapshot's time on 100,000 tensors (no types, shapes or problems).
ModelSnapshot layoutSnapshot(const repack::Model& model)
{
    ModelSnapshot snap;
    snap.protobufBytes = model.fileBytes();
    snap.tensors.reserve(qsizetype(model.tensors().size()));
    const QString inlineText = QStringLiteral("inline");
    QString location;
    const std::string* lastLocation = nullptr;
    for (const repack::TensorInfo& t : model.tensors()) {
        TensorRow row;
        row.name = qs(t.name);
        row.bytes = t.byteSize();
        row.external = t.isExternal();
        if (row.external) {
            if (!lastLocation || *lastLocation != t.external->location()) {
                lastLocation = &t.external->location();
                location = qs(t.external->location());
            }
            row.storage = location;
            row.offset = t.external->offset;
            row.length = t.external->length.value_or(t.byteSize());
        } else {
            row.storage = inlineText;
        }
        snap.tensors.append(std::move(row));
    }
    snap.layouts = repack::computeLayout(model, repack::kDefaultAlignment);
    return snap;
}

} // namespace

struct CompareWindow::Opened {
    std::shared_ptr<repack::Model> model;
    ModelSnapshot snapshot;
    QString error;
};

std::shared_ptr<CompareWindow::Opened> CompareWindow::open(
    const QString& path, const repack::CancelToken* cancel)
{
    auto one = std::make_shared<Opened>();
    auto model = repack::openModelArgument(path.toStdString(), cancel);
    if (!model) {
        one->error = qs(model.error().message);
        return one;
    }
    one->model = std::move(model.value());
    one->snapshot = layoutSnapshot(*one->model);
    return one;
}

std::shared_ptr<CompareWindow::Loaded> CompareWindow::diffLayouts(
    const std::shared_ptr<Opened>& a, const std::shared_ptr<Opened>& b)
{
    auto out = std::make_shared<CompareWindow::Loaded>();
    if (!a->model || !b->model) {
        out->error = a->model ? b->error : a->error;
        return out;
    }
    out->a = a->model;
    out->b = b->model;
    repack::DiffOptions quick;
    quick.compareContent = false;
    auto entries = repack::diffModels(*out->a, *out->b, quick);
    if (!entries) {
        out->error = qs(entries.error().message);
        return out;
    }
    out->diff = std::make_shared<LayoutDiff>(
        compareDiff(a->snapshot, b->snapshot, entries.value(), false));
    return out;
}

CompareWindow::CompareWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_model(new DiffTableModel(this))
    , m_filter(new DiffKindFilter(this))
    , m_waits(new WaitRelay(this))
{
    setWindowTitle(tr("Compare — Onnx Repack"));
    m_filter->setSourceModel(m_model);

    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(6, 4, 6, 0);
    m_titles = new QLabel(central);
    m_titles->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_titles);

    m_view = new LayoutDiffView(central);

    QWidget* lower = createChangeList(central);
    connectSelection();

    auto* splitter = new QSplitter(Qt::Vertical, central);
    splitter->addWidget(m_view);
    splitter->addWidget(lower);
    splitter->setChildrenCollapsible(false);
    splitter->setSizes({380, 320});
    layout->addWidget(splitter, 1);
    setCentralWidget(central);

    createStatusBar();

    m_pollTimer.setInterval(150);
    connect(&m_pollTimer, &QTimer::timeout, this, &CompareWindow::poll);
    addShortcuts();
    resize(1200, 800);
    fitOnScreen(this); // the default size never past a small screen
}

QWidget* CompareWindow::createChangeList(QWidget* central)
{
    auto* lower = new QWidget(central);
    auto* lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    auto* boxes = new QHBoxLayout;
    const QString names[FilterCount] = {tr("added"), tr("removed"), tr("moved"),
        tr("storage changed"), tr("content changed"), tr("unchanged")};
    for (int f = 0; f < FilterCount; ++f) {
        auto* box = new QCheckBox(names[f], lower);
        box->setChecked(f != Unchanged);
        box->setProperty("label", names[f]);
        QPixmap swatch(12, 12);
        swatch.fill(colors::changeColor(kFilterKinds[f][0]));
        box->setIcon(QIcon(swatch));
        connect(box, &QCheckBox::toggled, this,
            [this, f](bool on) { setFilterVisible(Filter(f), on); });
        boxes->addWidget(box);
        m_boxes[size_t(f)] = box;
    }
    boxes->addStretch(1);
    lowerLayout->addLayout(boxes);
    setFilterVisible(Unchanged, false);

    m_table = new QTableView(lower);
    m_table->setModel(m_filter);
    setUpLargeTable(m_table);
    QHeaderView* header = m_table->horizontalHeader();
    header->setStretchLastSection(true);
    const int widths[DiffTableModel::ColumnCount] = {220, 150, 90, 80, 150, 90, 80, 160};
    for (int c = 0; c < DiffTableModel::ColumnCount; ++c)
        header->resizeSection(c, widths[c]);
    lowerLayout->addWidget(m_table, 1);
    return lower;
}

void CompareWindow::connectSelection()
{
    m_view->setSelectionModel(m_table->selectionModel(), m_filter);
    connect(m_view, &LayoutDiffView::hiddenTensorClicked, this, [this](int tensor) {
        // Show its kind, then select it.
        const ChangeKind kind = m_model->tensor(tensor).kind;
        for (int f = 0; f < FilterCount; ++f) {
            if (kFilterKinds[f][0] == kind || kFilterKinds[f][1] == kind)
                m_boxes[size_t(f)]->setChecked(true);
        }
        const QModelIndex row = m_filter->mapFromSource(m_model->index(tensor, 0));
        if (row.isValid()) {
            m_table->selectionModel()->setCurrentIndex(
                row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            m_table->scrollTo(row);
        }
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        [this](const QModelIndex& current) {
            if (current.isValid())
                m_table->scrollTo(current);
        });
}

void CompareWindow::createStatusBar()
{
    m_status = new QLabel(this);
    m_waiting = new WaitLabel(this);
    connect(m_waits, &WaitRelay::changed, m_waiting, &WaitLabel::setWaiting);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(220);
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->hide();
    connect(m_cancel, &QPushButton::clicked, this, &CompareWindow::cancel);
    statusBar()->addWidget(m_status, 1);
    statusBar()->addPermanentWidget(m_waiting);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
}

void CompareWindow::addShortcuts()
{
    // Ctrl+W closes, as every window of the desktop; Esc stops a running compare first, then
    // closes.
    auto* close = new QAction(tr("Close"), this);
    close->setShortcuts(QKeySequence::Close);
    connect(close, &QAction::triggered, this, &QWidget::close);
    addAction(close);
    auto* escape = new QAction(tr("Stop or close"), this);
    escape->setShortcut(QKeySequence(Qt::Key_Escape));
    connect(escape, &QAction::triggered, this, [this] {
        if (isRunning())
            cancel();
        else
            this->close();
    });
    addAction(escape);
}

CompareWindow::~CompareWindow()
{
    // A worker still running keeps its models and finishes on its own; tell it to stop.
    if (m_shared)
        m_shared->cancel.cancel();
    releaseInBackground(std::make_pair(std::move(m_a), std::move(m_b)));
}

void CompareWindow::compare(const QString& a, const QString& b)
{
    if (m_shared)
        m_shared->cancel.cancel();
    m_shared = std::make_shared<Shared>();
    m_waits->watch(m_shared->cancel);
    m_stage = Stage::Loading;
    m_contentCompared = false;
    m_lastError.clear();
    m_titles->setText(tr("<b>A</b> %1 &nbsp;&nbsp; <b>B</b> %2")
                          .arg(shownName(a).toHtmlEscaped(), shownName(b).toHtmlEscaped()));
    m_status->setText(tr("Loading both models…"));
    m_progress->setRange(0, 0);
    m_progress->show();
    m_cancel->show();
    m_opened = {};
    // Either may be a URL: the shared token stops its fetch.
    m_jobs.start([a, shared = m_shared] { return open(a, &shared->cancel); },
        [this](const std::shared_ptr<Opened>& opened) { onOpened(0, opened); });
    m_openB.start([b, shared = m_shared] { return open(b, &shared->cancel); },
        [this](const std::shared_ptr<Opened>& opened) { onOpened(1, opened); });
}

void CompareWindow::onOpened(size_t side, const std::shared_ptr<Opened>& opened)
{
    if (m_stage != Stage::Loading)
        return;
    m_opened[side] = opened;
    if (!m_opened[0] || !m_opened[1])
        return;
    // The snapshots are freed on the worker, with the job.
    m_jobs.start([a = std::exchange(m_opened[0], nullptr),
                     b = std::exchange(m_opened[1], nullptr)] { return diffLayouts(a, b); },
        [this](const std::shared_ptr<Loaded>& loaded) { onLoaded(loaded); });
}

void CompareWindow::onLoaded(const std::shared_ptr<Loaded>& loaded)
{
    if (m_stage != Stage::Loading)
        return;
    if (m_shared->cancel.isCancelled()) {
        fail(tr("Cancelled"));
        return;
    }
    if (!loaded->error.isEmpty()) {
        fail(loaded->error);
        return;
    }
    releaseInBackground(
        std::make_pair(std::exchange(m_a, loaded->a), std::exchange(m_b, loaded->b)));
    m_diff = loaded->diff;
    m_model->setDiff(m_diff);
    m_view->setDiff(m_diff);
    updateCounts();
    Q_EMIT layoutReady();

    // The bytes, on a worker: pairs that share a file range are equal without reading.
    m_stage = Stage::Comparing;
    m_status->setText(tr("Comparing bytes…"));
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_pollTimer.start();
    m_jobs.start(
        [a = m_a, b = m_b, base = m_diff, shared = m_shared]() -> std::shared_ptr<Compared> {
            auto out = std::make_shared<Compared>();
            repack::DiffOptions options;
            options.cancel = &shared->cancel;
            options.progress = [shared](const repack::Progress& p) {
                shared->done.store(p.bytesDone, std::memory_order_relaxed);
                shared->total.store(p.bytesTotal, std::memory_order_relaxed);
            };
            auto entries = repack::diffModels(*a, *b, options);
            if (!entries) {
                out->error = qs(entries.error().message);
                return out;
            }
            out->diff = std::make_shared<LayoutDiff>(*base);
            out->changed = applyContentDiff(*out->diff, entries.value());
            return out;
        },
        [this](const std::shared_ptr<Compared>& compared) { onCompared(compared); });
}

void CompareWindow::onCompared(const std::shared_ptr<Compared>& compared)
{
    if (m_stage != Stage::Comparing)
        return;
    m_pollTimer.stop();
    if (m_shared->cancel.isCancelled()) {
        fail(tr("Byte comparison cancelled: the statuses compare storage only."));
        return;
    }
    if (!compared->error.isEmpty()) {
        fail(tr("Cannot compare the bytes: %1").arg(compared->error));
        return;
    }
    m_diff = compared->diff;
    m_model->updateKinds(m_diff, compared->changed);
    m_view->setDiff(m_diff);
    updateCounts();
    m_stage = Stage::Idle;
    m_contentCompared = true;
    m_waits->stop();
    m_progress->hide();
    m_cancel->hide();
    m_status->setText(tr("Compared by bytes: %n tensor(s) with other content.", nullptr,
        int(m_diff->count(ChangeKind::ContentChanged))));
    Q_EMIT finished(true);
}

void CompareWindow::poll()
{
    if (!m_shared)
        return;
    const uint64_t total = m_shared->total.load(std::memory_order_relaxed);
    const uint64_t done = m_shared->done.load(std::memory_order_relaxed);
    if (total) {
        m_progress->setValue(int(1000.0 * double(done) / double(total)));
        m_status->setText(
            tr("Comparing bytes: %1 of %2").arg(formatBytes(done), formatBytes(total)));
    }
}

void CompareWindow::cancel()
{
    if (m_shared && isRunning()) {
        m_shared->cancel.cancel();
        m_status->setText(tr("Cancelling…"));
    }
}

void CompareWindow::fail(const QString& error)
{
    const bool hadLayout = m_stage == Stage::Comparing;
    m_stage = Stage::Idle;
    m_pollTimer.stop();
    m_waits->stop();
    m_lastError = error;
    m_progress->hide();
    m_cancel->hide();
    m_status->setText(error);
    if (!hadLayout)
        m_titles->setText(m_titles->text() + QStringLiteral("<br>") + error.toHtmlEscaped());
    Q_EMIT finished(false);
}

void CompareWindow::updateCounts()
{
    std::vector<size_t> counts(kChangeKindCount, 0);
    if (m_diff) {
        for (const DiffTensor& t : m_diff->tensors)
            ++counts[size_t(t.kind)];
    }
    for (int f = 0; f < FilterCount; ++f) {
        size_t n = counts[size_t(kFilterKinds[f][0])];
        if (kFilterKinds[f][1] != kFilterKinds[f][0])
            n += counts[size_t(kFilterKinds[f][1])];
        m_boxes[size_t(f)]->setText(
            QStringLiteral("%1 (%2)").arg(m_boxes[size_t(f)]->property("label").toString()).arg(n));
    }
}

void CompareWindow::setFilterVisible(Filter filter, bool visible)
{
    m_filter->setKindVisible(kFilterKinds[filter][0], visible);
    m_filter->setKindVisible(kFilterKinds[filter][1], visible);
}

} // namespace ui
