// Text for a terminal, for the CLI only: names from a model made safe to print, the columns
// they take, and durations.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace repack {

// "0.09 s", "4.20 s", "12.3 s", "125 s"
std::string formatSeconds(double seconds);
// Seconds as a user types them in an option: "30", "0.5".
std::string secondsText(double seconds);

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
