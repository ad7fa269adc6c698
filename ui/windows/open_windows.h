// The windows the paths a user names open in: `onnx-repack-gui PATH...` and the further models
// dropped on a window. A folder opens as one unit in a folder window (its graphs, their data
// files, one shared data file), a model in a main window of its own.
#pragma once

#include <QList>
#include <QStringList>

class QWidget;

namespace ui {

// Whether `path` names a folder of graphs a FolderWindow shows: a local folder, or a folder of
// the Hub (hf://ORG/REPO[@REV]/DIR, read-only).
bool namesFolder(const QString& path);

// One top-level window per path, shown, deleted when closed, in the order given: a folder's
// FolderWindow, else a MainWindow opening the model (which says why when it cannot).
QList<QWidget*> openWindows(const QStringList& paths);

} // namespace ui
