#include "data_file_name.h"

#include "core/file_names.h"

namespace ui {

QString dataFileNameError(const QString& name)
{
    if (name.isEmpty())
        return {}; // the default name
    // The core's rules, so the panel refuses exactly what a save would.
    if (repack::Status s = repack::checkDataFileName(name.toStdString()); !s)
        return QString::fromStdString(s.error().message);
    return {};
}

} // namespace ui
