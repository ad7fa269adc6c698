// The core's rules for a data file name the user typed (repack::checkDataFileName), as the
// repack panel and the placement edits show them: empty when `name` can be used (an empty name
// is the save's default), else why not.
#pragma once

#include <QString>

namespace ui {

QString dataFileNameError(const QString& name);

} // namespace ui
