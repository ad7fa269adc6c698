#include "format.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace repack {

std::string formatBytes(uint64_t bytes)
{
    static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024)
        return std::to_string(bytes) + " B";
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024 && unit < 4) {
        value /= 1024;
        ++unit;
    }
    char text[32];
    std::snprintf(text, sizeof text,
        value < 10        ? "%.2f %s"
            : value < 100 ? "%.1f %s"
                          : "%.0f %s",
        value, kUnits[unit]);
    return text;
}

std::string formatShape(std::span<const int64_t> shape)
{
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i)
            out += ", ";
        out += std::to_string(shape[i]);
    }
    return out + "]";
}

std::optional<uint64_t> parseSize(const std::string& text)
{
    size_t pos = 0;
    while (pos < text.size()
        && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.'))
        ++pos;
    if (pos == 0)
        return std::nullopt;
    const std::string number = text.substr(0, pos);
    std::string unit = text.substr(pos);
    for (auto& c : unit)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    double multiplier = 1;
    if (unit.empty() || unit == "B")
        multiplier = 1;
    else if (unit == "K" || unit == "KB" || unit == "KIB")
        multiplier = 1024.0;
    else if (unit == "M" || unit == "MB" || unit == "MIB")
        multiplier = 1024.0 * 1024;
    else if (unit == "G" || unit == "GB" || unit == "GIB")
        multiplier = 1024.0 * 1024 * 1024;
    else
        return std::nullopt;
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !std::isfinite(value))
        return std::nullopt;
    const double bytes = value * multiplier;
    if (bytes > 9.0e18 || bytes != std::floor(bytes))
        return std::nullopt;
    return static_cast<uint64_t>(bytes);
}

} // namespace repack
