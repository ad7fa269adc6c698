// The settings every table of up to 100,000 tensors shares (the main window's tensor table,
// the compare window's diff table), in one place so they cannot drift apart.
#pragma once

class QTableView;

namespace ui {

// Sorting on, in model order until the user sorts; whole rows, many at once; names elided on
// the right (the full text of a cell cut short is in its tooltip); fixed row heights and
// interactive column widths, so nothing is measured per row and 100,000 rows stay fast.
void setUpLargeTable(QTableView* table);

} // namespace ui
