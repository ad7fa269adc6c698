// Human-readable sizes and shapes, and sizes parsed back, for the CLI and the desktop app.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace repack {

// "0 B", "999 B", "1.5 KiB", "12.0 MiB", "2.00 GiB"
std::string formatBytes(uint64_t bytes);
// "[2, 3, 4]"; "[]" for a scalar
std::string formatShape(std::span<const int64_t> shape);
// Parses "1024", "4K", "4KiB", "1.5M", "2GiB" (binary multiples); nullopt when malformed.
std::optional<uint64_t> parseSize(const std::string& text);

} // namespace repack
