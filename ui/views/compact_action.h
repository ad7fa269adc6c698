// "Compact <file>": asks the next save to compact a data file (its own tensors close the
// orphaned ranges between them; RepackPanel::setCompactFile), offered where a file is shown
// (the layout map's and the tensor table's context menus).
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

#include <utility>
#include <vector>

class QAction;
class QMenu;

namespace repack {
struct FileLayout;
}

namespace ui {

// Adds the action for `file` to `menu`, saying how many orphaned bytes it has (always enabled);
// the caller connects it. Its object name is "compactFileAction".
QAction* addCompactAction(QMenu* menu, const repack::FileLayout& file);

// Every data file of `layouts`, each with what a menu says of it ("19.0 KiB orphaned", "no
// orphaned bytes"): RepackPanel::setCompactOffers.
QList<std::pair<QString, QString>> compactOffers(const std::vector<repack::FileLayout>& layouts);

// The data files of `layouts` a local copy of a model read where it lives compacts, keeping
// placement (RepackPanel::setAlwaysCompacted): every raw data file (a safetensors file is never
// compacted as raw data: its header would go).
QStringList compactedInACopy(const std::vector<repack::FileLayout>& layouts);

} // namespace ui
