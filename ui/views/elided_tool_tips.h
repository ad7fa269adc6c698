// Cells an item view cuts short ("out-of-r…") show their whole text as a tooltip, in the manner
// of file managers: hovering a cell whose text does not fit its column shows the text the model
// gives it (Qt::DisplayRole), unless the model has a tooltip of its own for that cell (which
// then says more). Cells that fit show nothing.
#pragma once

#include <QString>

class QAbstractItemView;
class QModelIndex;

namespace ui {

// Installs that on `view` (its viewport's tooltip events), for as long as the view lives.
void showCutTextInToolTips(QAbstractItemView* view);

// The text `view` cuts short in the cell `index`: its whole display text; empty when the cell
// shows all of it.
QString cutText(const QAbstractItemView* view, const QModelIndex& index);

} // namespace ui
