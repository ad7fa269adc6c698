#include "byte_format.h"

#include "core/format.h"

namespace ui {

QString formatBytes(uint64_t bytes)
{
    return QString::fromStdString(repack::formatBytes(bytes)).replace(u' ', QChar::Nbsp);
}

} // namespace ui
