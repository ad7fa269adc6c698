// Cells an item view cuts short ("out-of-r…") show their whole text as a tooltip, in the manner
// of file managers: hovering a cell whose text does not fit its column shows the text the model
// gives it (Qt::DisplayRole). A tooltip of the model's own for that cell (which says more) is
// shown as it is when it holds that text, else after it ("* save's data file", then why the
// tensor goes there). Cells that fit show the model's tooltip only.
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
