// What the app ships (the bundled sample model and its data file) is never written by a save:
// the app registers, once at start, the folders it looks for the sample in (beside the
// executable, the installed share folder), and a window showing a model from one of them opens
// it read-only, offering Save As… instead of Save, and refuses any save into such a folder. The
// check is by folder, so the sample is read-only however it is opened again (File > Open,
// Open Recent, a drop, a reload).
#pragma once

#include <QString>

namespace ui {

// `folder` holds files the app ships; a folder that does not exist now is ignored.
void addShippedFolder(const QString& folder);

// Whether `path` (a model shown, or a file a save would write) lies in a folder the app ships,
// by any name (links resolved). A URL never does.
bool isShipped(const QString& path);

} // namespace ui
