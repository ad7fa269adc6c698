// MainWindow's widgets: summary strip, filter row, the tensor table over the layout map, and the
// repack and problems docks, sized for a first start.
#include "main_window.h"

#include "busy_indicator.h"
#include "layout_diff_view.h"
#include "layout_map_view.h"
#include "problems_model.h"
#include "repack_panel.h"
#include "save_preview.h"
#include "size_bar_delegate.h"
#include "summary_strip.h"
#include "tensor_filter_proxy.h"
#include "tensor_table_model.h"

#include <QComboBox>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QVBoxLayout>

namespace ui {

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
    const int widths[TensorTableModel::ColumnCount]
        = {180, 170, 72, 62, 84, 96, 124, 110, 66, 66, 80};
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
    resizeDocks({repackDock}, {330}, Qt::Horizontal);
    createPlacement();

    m_busy = new BusyIndicator(statusBar());
}

} // namespace ui
