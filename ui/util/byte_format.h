// Byte counts for display, in the same binary units as the CLI ("1.50 MiB"), number and unit
// joined by a non-breaking space so a wrapping label never puts them on two lines.
#pragma once

#include <QString>

#include <cstdint>

namespace ui {

QString formatBytes(uint64_t bytes);

} // namespace ui
