// "Compact <file>": asks the next save to compact a data file (its own tensors close the
// orphaned ranges between them; RepackPanel::addCompactFile), offered where a file is shown
// (the layout map's and the tensor table's context menus).
#pragma once

class QAction;
class QMenu;

namespace repack {
struct FileLayout;
}

namespace ui {

// Adds the action for `file` to `menu`: enabled when the file has orphaned bytes, saying how
// many; the caller connects it. Its object name is "compactFileAction".
QAction* addCompactAction(QMenu* menu, const repack::FileLayout& file);

} // namespace ui
