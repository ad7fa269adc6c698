#include "large_table.h"

#include "elided_tool_tips.h"

#include <QHeaderView>
#include <QTableView>

namespace ui {

void setUpLargeTable(QTableView* table)
{
    table->setSortingEnabled(true);
    table->sortByColumn(-1, Qt::AscendingOrder); // model order until the user sorts
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table->setAlternatingRowColors(true);
    table->setWordWrap(false);
    table->setShowGrid(false);
    // A name cut in the middle reads the same as its neighbours, whose ends differ by a digit.
    table->setTextElideMode(Qt::ElideRight);
    showCutTextInToolTips(table);
    table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
}

} // namespace ui
