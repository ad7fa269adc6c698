// Human-readable sizes, shapes and durations, and names made safe for a terminal, for the CLI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace repack {

// "0 B", "999 B", "1.5 KiB", "12.0 MiB", "2.00 GiB"
std::string formatBytes(uint64_t bytes);
// "[2, 3, 4]"; "[]" for a scalar
std::string formatShape(const std::vector<int64_t>& shape);
// "0.09 s", "4.20 s", "12.3 s", "125 s"
std::string formatSeconds(double seconds);
// Parses "1024", "4K", "4KiB", "1.5M", "2GiB" (binary multiples); nullopt when malformed.
std::optional<uint64_t> parseSize(const std::string& text);

// Text from a model (a tensor name, a location, a path) as a terminal should get it: control
// characters, which could break a table's lines or drive the terminal, escaped as \n, \t, \r,
// \x1b (C0 and DEL) or \u0085 (C1); bytes that are not UTF-8 as \xff. The rest is unchanged.
std::string printable(std::string_view text);
// The columns printable UTF-8 text takes in a terminal: East Asian wide and fullwidth
// characters 2, combining marks and other zero-width characters 0, the others 1.
size_t displayWidth(std::string_view text);
// printable(text) cut to at most `columns` columns and padded with spaces to exactly that many.
std::string fitWidth(std::string_view text, size_t columns);

} // namespace repack
