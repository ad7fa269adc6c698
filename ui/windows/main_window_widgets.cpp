// MainWindow's widgets: summary strip, filter row, the tensor table over the layout map, and the
// repack and problems docks, sized for a first start (usable from 1024x700).
#include "main_window.h"

#include "ui/models/problems_model.h"
#include "ui/models/size_bar_delegate.h"
#include "ui/models/tensor_filter_proxy.h"
#include "ui/models/tensor_table_model.h"
#include "ui/save/save_preview.h"
#include "ui/util/settings_store.h"
#include "ui/views/busy_indicator.h"
#include "ui/views/elided_tool_tips.h"
#include "ui/views/large_table.h"
#include "ui/views/layout_diff_view.h"
#include "ui/views/layout_map_view.h"
#include "ui/views/repack_panel.h"
#include "ui/views/summary_strip.h"

#include <QComboBox>
#include <QDockWidget>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace ui {
namespace {

using Column = TensorTableModel::Columns;

// Left to right: what a tensor is called, how big it is and where its bytes are (now, planned,
// at which range, with which problem) come first, so they stay on screen in a narrow window;
// the descriptive columns follow.
constexpr Column kDefaultOrder[] = {TensorTableModel::Name, TensorTableModel::Size,
    TensorTableModel::Storage, TensorTableModel::Planned, TensorTableModel::Offset,
    TensorTableModel::Length, TensorTableModel::Status, TensorTableModel::Dtype,
    TensorTableModel::Shape, TensorTableModel::Kind, TensorTableModel::Scope};
static_assert(std::size(kDefaultOrder) == TensorTableModel::ColumnCount);

// Widths that fit typical values (and the header's sort arrow) in the table's font, without
// measuring any row: 100,000 rows stay fast.
void setDefaultWidths(QHeaderView* header, const QFontMetrics& metrics)
{
    const int pad = metrics.averageCharWidth() + 10;
    auto fit = [&](const QString& typical) { return metrics.horizontalAdvance(typical) + pad; };
    auto atLeastTitle = [&](int section, int width) {
        const QString title = header->model()->headerData(section, Qt::Horizontal).toString();
        return std::max(width, metrics.horizontalAdvance(title) + pad + 12);
    };
    const QString digits = QStringLiteral("00000000"); // offsets into files of 10s of MiB
    const int widths[TensorTableModel::ColumnCount] = {
        fit(QStringLiteral("decoder.layers.0.attn.weight")), // Name (refitted to the view)
        fit(QStringLiteral("graph/node/then_branch")), // Scope
        fit(QStringLiteral("initializer")), // Kind
        fit(QStringLiteral("bfloat16")), // Type
        fit(QStringLiteral("[1024, 1024]")), // Shape
        fit(QStringLiteral("1023.9 MiB")) + 8, // Size, with its bar's margin
        fit(QStringLiteral("model.onnx.data")), // Storage
        fit(QStringLiteral("* inline")), // Planned
        fit(digits), // Offset
        fit(digits), // Length
        fit(QStringLiteral("ok")), // Status
    };
    for (int c = 0; c < TensorTableModel::ColumnCount; ++c)
        header->resizeSection(c, atLeastTitle(c, widths[c]));
}

// The Name column takes what the others leave of the view (never less than a readable name),
// until the user sizes it by hand.
class NameColumnFit : public QObject {
public:
    explicit NameColumnFit(QTableView* table)
        : QObject(table)
        , m_table(table)
        , m_viewport(table->viewport())
        , m_minimum(table->fontMetrics().averageCharWidth() * 24)
    {
        m_viewport->installEventFilter(this);
        connect(table->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int section) {
            if (m_fitting)
                return;
            if (section == TensorTableModel::Name)
                m_userSized = true;
            else
                fit();
        });
    }

    void fit()
    {
        QHeaderView* header = m_table->horizontalHeader();
        if (m_userSized || header->isSectionHidden(TensorTableModel::Name))
            return;
        int others = 0;
        for (int c = 0; c < header->count(); ++c) {
            if (c != TensorTableModel::Name && !header->isSectionHidden(c))
                others += header->sectionSize(c);
        }
        const int width = std::max(m_minimum, m_table->viewport()->width() - others);
        m_fitting = true;
        header->resizeSection(TensorTableModel::Name, width);
        m_fitting = false;
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        // Compared with the viewport kept at construction: the viewport still sends events while
        // the table is being destroyed, when m_table is no longer a QTableView to call into.
        if (watched == m_viewport && event->type() == QEvent::Resize)
            fit();
        return false;
    }

private:
    QTableView* m_table;
    QWidget* m_viewport;
    int m_minimum;
    bool m_fitting = false;
    bool m_userSized = false;
};

} // namespace

void MainWindow::createWidgets()
{
    createCentralArea();

    // The right docks run the full height, so the repack options fit beside a short window.
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);

    QDockWidget* repackDock = createRepackDock();
    QDockWidget* problemsDock = createProblemsDock();
    createBeforeAfterDock(problemsDock);
    resizeDocks({repackDock}, {300}, Qt::Horizontal);
    createPlacement();
    // The Placement pane lists a few destinations: it gets what they need, the Preview above it
    // the rest (at 1024x700 it showed three lines over an empty pane).
    if (auto* placementDock = findChild<QDockWidget*>(QStringLiteral("placementDock")))
        resizeDocks(
            {placementDock}, {placementDock->fontMetrics().lineSpacing() * 7}, Qt::Vertical);

    // After a failed open with no model shown, the map says why instead of "No model".
    connect(this, &MainWindow::openFailed, m_map,
        [this](const QString&, const QString& error) { m_map->setLoadError(error); });

    m_busy = new BusyIndicator(statusBar());
}

void MainWindow::createCentralArea()
{
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(6, 4, 6, 0);
    layout->setSpacing(4);

    // A model read where it lives says so above everything else, with the version shown.
    m_readOnlyBanner = new QLabel(central);
    m_readOnlyBanner->setObjectName(QStringLiteral("readOnlyBanner"));
    m_readOnlyBanner->setWordWrap(true);
    m_readOnlyBanner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_readOnlyBanner->setStyleSheet(QStringLiteral(
        "QLabel { background: #fdf0d5; color: #5c3c00; padding: 4px; border-radius: 3px; }"));
    m_readOnlyBanner->hide();
    layout->addWidget(m_readOnlyBanner);
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
    setUpLargeTable(m_table); // declaration order until the user sorts, fixed row heights
    QHeaderView* header = m_table->horizontalHeader();
    header->setStretchLastSection(false);
    header->setHighlightSections(false);
    header->setSectionsMovable(true);
    for (int visual = 0; visual < TensorTableModel::ColumnCount; ++visual)
        header->moveSection(header->visualIndex(kDefaultOrder[visual]), visual);
    setDefaultWidths(header, m_table->fontMetrics());
    // The order, widths and sort the user left last time (closeEvent stores them).
    header->restoreState(setting(QStringLiteral("window/tableHeader")).toByteArray());
    new NameColumnFit(m_table);
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
    m_splitter->setSizes({400, 150});
    layout->addWidget(m_splitter, 1);
    setCentralWidget(central);
}

QDockWidget* MainWindow::createRepackDock()
{
    m_panel = new RepackPanel(this);
    // Save is disabled (with the reason as its tooltip) while the preview says it would fail.
    connect(m_panel, &RepackPanel::saveBlockerChanged, this, &MainWindow::updateActions);
    auto* repackDock = new QDockWidget(tr("Repack"), this);
    repackDock->setObjectName(QStringLiteral("repackDock"));
    repackDock->setWidget(m_panel);
    repackDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::RightDockWidgetArea, repackDock);
    return repackDock;
}

QDockWidget* MainWindow::createProblemsDock()
{
    m_problemsView = new QTableView(this);
    m_problemsView->setObjectName(QStringLiteral("problemsView"));
    m_problemsView->setModel(m_problemsModel);
    m_problemsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_problemsView->setWordWrap(false);
    showCutTextInToolTips(m_problemsView);
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
    return problemsDock;
}

void MainWindow::createBeforeAfterDock(QDockWidget* problemsDock)
{
    // The pending repack as a diff of layouts, a tab beside the problems; one selection with
    // the table (diff tensor i is tensor i).
    m_beforeAfter = new BeforeAfterPanel(this);
    m_beforeAfter->view()->setSelectionModel(m_table->selectionModel(), m_proxy);
    connect(m_beforeAfter->view(), &LayoutDiffView::hiddenTensorClicked, this, [this](int tensor) {
        clearFilters();
        selectTensor(tensor);
    });
    auto* beforeAfterDock = new QDockWidget(tr("Before / after"), this);
    beforeAfterDock->setObjectName(QStringLiteral("beforeAfterDock"));
    beforeAfterDock->setWidget(m_beforeAfter);
    addDockWidget(Qt::BottomDockWidgetArea, beforeAfterDock);
    tabifyDockWidget(problemsDock, beforeAfterDock);
    problemsDock->raise();
    resizeDocks({problemsDock}, {110}, Qt::Vertical);
    // The area is sized for a few problems; the diff needs its two bars and the changes: raised,
    // it grows to a third of the window (at least 220 px), never shrinks what the user made.
    connect(beforeAfterDock, &QDockWidget::visibilityChanged, this,
        [this, beforeAfterDock](bool shown) {
            if (!shown || beforeAfterDock->isFloating())
                return;
            QTimer::singleShot(0, this, [this, beforeAfterDock] {
                const int wanted = std::max(220, height() / 3);
                if (beforeAfterDock->isVisible() && beforeAfterDock->height() < wanted)
                    resizeDocks({beforeAfterDock}, {std::min(wanted, height() / 2)}, Qt::Vertical);
            });
        });
}

} // namespace ui
