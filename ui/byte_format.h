// Byte counts for display, in the same binary units as the CLI ("1.50 MiB").
#pragma once

#include <QString>

#include <cstdint>

namespace ui {

QString formatBytes(uint64_t bytes);

} // namespace ui
