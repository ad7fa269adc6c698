// Text for a terminal: names made safe to print, their width in columns, durations.
#include "terminal_text.h"

#include <algorithm>
#include <cstdio>
#include <cwchar>

#include <locale.h>

namespace repack {
namespace {

struct CodePoint {
    char32_t value;
    size_t bytes; // 0: text[pos] does not start a well-formed UTF-8 sequence
};

// The code point at text[pos]: strict UTF-8 (no overlong forms, surrogates or values past
// U+10FFFF).
CodePoint decodeUtf8(std::string_view text, size_t pos)
{
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[pos + i]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80)
        return {lead, 1};
    size_t length = 0;
    char32_t value = 0;
    char32_t minimum = 0;
    if ((lead & 0xE0) == 0xC0) {
        length = 2, value = lead & 0x1F, minimum = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        length = 3, value = lead & 0x0F, minimum = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        length = 4, value = lead & 0x07, minimum = 0x10000;
    } else {
        return {0, 0};
    }
    if (pos + length > text.size())
        return {0, 0};
    for (size_t i = 1; i < length; ++i) {
        if ((byte(i) & 0xC0) != 0x80)
            return {0, 0};
        value = (value << 6) | (byte(i) & 0x3F);
    }
    if (value < minimum || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF))
        return {0, 0};
    return {value, length};
}

// Columns of one printable code point, as glibc's wcwidth says under a UTF-8 LC_CTYPE. The
// locale is this thread's only (uselocale), never the process's; without C.UTF-8 (not glibc),
// every character counts 1.
class CharWidth {
public:
    CharWidth()
        : m_old(s_utf8 ? uselocale(s_utf8) : nullptr)
    {
    }
    ~CharWidth()
    {
        if (m_old)
            uselocale(m_old);
    }
    CharWidth(const CharWidth&) = delete;
    CharWidth& operator=(const CharWidth&) = delete;

    size_t operator()(char32_t c) const
    {
        if (!s_utf8)
            return 1;
        const int width = wcwidth(static_cast<wchar_t>(c));
        return width < 0 ? 1 : static_cast<size_t>(width); // unassigned: as the terminal's box
    }

private:
    static inline const locale_t s_utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{});
    locale_t m_old;
};

void appendHex(std::string& out, const char* prefix, unsigned value, int digits)
{
    char text[16];
    std::snprintf(text, sizeof text, "%s%0*x", prefix, digits, value);
    out += text;
}

} // namespace

std::string formatSeconds(double seconds)
{
    char text[32];
    std::snprintf(text, sizeof text,
        seconds < 9.995       ? "%.2f s"
            : seconds < 99.95 ? "%.1f s"
                              : "%.0f s",
        seconds);
    return text;
}

std::string secondsText(double seconds)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", seconds);
    return text;
}

namespace {

// Printable ASCII only: each byte one column, shown as it is (table cells of a model of
// 100,000 tensors are almost all such names and numbers).
bool plainAscii(std::string_view text)
{
    return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

} // namespace

std::string printable(std::string_view text)
{
    if (plainAscii(text))
        return std::string(text);
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        const CodePoint c = decodeUtf8(text, pos);
        if (c.bytes == 0) {
            appendHex(out, "\\x", static_cast<unsigned char>(text[pos]), 2);
            ++pos;
            continue;
        }
        if (c.value == '\n')
            out += "\\n";
        else if (c.value == '\t')
            out += "\\t";
        else if (c.value == '\r')
            out += "\\r";
        else if (c.value < 0x20 || c.value == 0x7F)
            appendHex(out, "\\x", c.value, 2);
        else if (c.value >= 0x80 && c.value < 0xA0)
            appendHex(out, "\\u", c.value, 4);
        else
            out.append(text, pos, c.bytes);
        pos += c.bytes;
    }
    return out;
}

size_t displayWidth(std::string_view text)
{
    if (plainAscii(text))
        return text.size();
    const CharWidth width;
    size_t columns = 0;
    for (size_t pos = 0; pos < text.size();) {
        const CodePoint c = decodeUtf8(text, pos);
        columns += c.bytes ? width(c.value) : 1;
        pos += c.bytes ? c.bytes : 1;
    }
    return columns;
}

std::string fitWidth(std::string_view text, size_t columns)
{
    const std::string safe = printable(text);
    const CharWidth width;
    std::string out;
    size_t used = 0;
    for (size_t pos = 0; pos < safe.size();) {
        const CodePoint c = decodeUtf8(safe, pos); // well-formed: printable() escaped the rest
        const size_t w = width(c.value);
        if (used + w > columns)
            break;
        out.append(safe, pos, c.bytes);
        used += w;
        pos += c.bytes;
    }
    return out.append(columns - used, ' ');
}

} // namespace repack
