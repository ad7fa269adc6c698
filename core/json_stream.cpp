#include "json_stream.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <ostream>

namespace repack {

namespace {

constexpr int kIndent = 2; // dump(2)

std::string dumped(const nlohmann::ordered_json& value, int indent)
{
    return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace

std::string jsonText(const nlohmann::ordered_json& value)
{
    return dumped(value, kIndent);
}

JsonStream::JsonStream(std::ostream& out)
    : m_out(out)
    , m_buffer(new char[kBufferBytes])
{
}

JsonStream::~JsonStream()
{
    flush();
}

void JsonStream::flush()
{
    m_out.write(m_buffer.get(), static_cast<std::streamsize>(m_used));
    m_used = 0;
}

void JsonStream::putLarge(std::string_view text)
{
    flush();
    if (text.size() <= kBufferBytes) {
        put(text);
        return;
    }
    m_out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

void JsonStream::nextMember()
{
    if (m_afterKey) { // the value of a key: on the key's line
        m_afterKey = false;
        return;
    }
    if (m_members.empty())
        return; // the top-level value
    const std::string_view line = newLine(m_members.size());
    put(m_members.back()++ ? line : line.substr(1));
}

std::string_view JsonStream::newLine(size_t depth)
{
    while (m_newLines.size() <= depth)
        m_newLines.push_back(",\n" + std::string(m_newLines.size() * kIndent, ' '));
    return m_newLines[depth];
}

void JsonStream::indent(size_t depth)
{
    put(newLine(depth).substr(2));
}

void JsonStream::open(char bracket)
{
    nextMember();
    put(bracket);
    m_members.push_back(0);
}

void JsonStream::close(char bracket)
{
    const size_t members = m_members.back();
    m_members.pop_back();
    if (members) { // dump() writes an empty object or array as "{}" or "[]"
        put('\n');
        indent(m_members.size());
    }
    put(bracket);
    if (m_members.empty())
        flush(); // the document is complete: what the caller writes next comes after it
}

void JsonStream::beginObject()
{
    open('{');
}
void JsonStream::beginArray()
{
    open('[');
}
void JsonStream::endObject()
{
    close('}');
}
void JsonStream::endArray()
{
    close(']');
}

namespace {

// Bytes that dump() writes as they are between quotes: printable ASCII but quote and backslash.
constexpr auto kPlain = [] {
    std::array<bool, 256> plain{};
    for (int c = 0x20; c < 0x7f; ++c)
        plain[static_cast<size_t>(c)] = c != '"' && c != '\\';
    return plain;
}();

bool plainBytes(std::string_view text)
{
    for (char c : text)
        if (!kPlain[static_cast<unsigned char>(c)])
            return false;
    return true;
}

// plainBytes, eight bytes at a time while no byte of a word may need escaping (names of
// 100,000 tensors are most of a report's text).
bool plain(std::string_view text)
{
    constexpr uint64_t kOnes = 0x0101010101010101;
    constexpr uint64_t kHighs = 0x8080808080808080;
    // Nonzero when some byte of v is zero (and maybe flags bytes above it).
    auto anyZero = [](uint64_t v) { return (v - kOnes) & ~v & kHighs; };
    size_t i = 0;
    for (; i + 8 <= text.size(); i += 8) {
        uint64_t w;
        std::memcpy(&w, text.data() + i, 8);
        // A byte at or above 0x80, below 0x20 (it borrows), 0x7f, a quote or a backslash:
        // the word is looked at byte by byte.
        if ((w & kHighs) || ((w - 0x20 * kOnes) & kHighs) || anyZero(w ^ (0x7f * kOnes))
            || anyZero(w ^ ('"' * kOnes)) || anyZero(w ^ ('\\' * kOnes)))
            return plainBytes(text.substr(i));
    }
    return plainBytes(text.substr(i));
}

} // namespace

void JsonStream::string(std::string_view text)
{
    write(stringBytes(text.size()), [text](char* out) { return writeString(out, text); });
}

char* JsonStream::writeString(char* out, std::string_view text)
{
    // dump() writes a byte as at most 6 (a control character as \u00XX; a byte that is not
    // UTF-8 becomes U+FFFD, 3): stringBytes.
    if (!plain(text)) {
        const std::string escaped = dumped(nlohmann::ordered_json(text), -1);
        return std::copy(escaped.begin(), escaped.end(), out);
    }
    *out++ = '"';
    out = std::copy(text.begin(), text.end(), out);
    *out++ = '"';
    return out;
}

void JsonStream::key(std::string_view name)
{
    nextMember();
    string(name);
    put(": ");
    m_afterKey = true;
}

void JsonStream::value(std::string_view text)
{
    nextMember();
    string(text);
}

template <typename Number> std::string_view numberText(char (&text)[24], Number number)
{
    const auto end = std::to_chars(text, text + sizeof text, number).ptr;
    return {text, static_cast<size_t>(end - text)};
}

void JsonStream::value(uint64_t number)
{
    nextMember();
    char text[24];
    put(numberText(text, number));
}

void JsonStream::value(int64_t number)
{
    nextMember();
    char text[24];
    put(numberText(text, number));
}

void JsonStream::null()
{
    nextMember();
    put("null");
}

void JsonStream::value(const nlohmann::ordered_json& element)
{
    nextMember();
    // Every line break of dump(2) is layout (strings escape theirs), so the element's lines
    // move right by the depth it is written at.
    const std::string text = dumped(element, kIndent);
    const std::string_view all(text);
    size_t start = 0;
    for (size_t end; (end = all.find('\n', start)) != all.npos; start = end + 1) {
        put(all.substr(start, end + 1 - start));
        indent(m_members.size());
    }
    put(all.substr(start));
    if (m_members.empty())
        flush(); // a top-level value is a whole document
}

} // namespace repack
