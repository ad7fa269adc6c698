#include "json_stream.h"

#include <algorithm>
#include <charconv>
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

constexpr size_t kFlushBytes = 64 << 10;

JsonStream::JsonStream(std::ostream& out)
    : m_out(out)
{
}

JsonStream::~JsonStream()
{
    flush();
}

void JsonStream::flush()
{
    m_out.write(m_buffer.data(), static_cast<std::streamsize>(m_buffer.size()));
    m_buffer.clear();
}

void JsonStream::nextMember()
{
    if (m_afterKey) { // the value of a key: on the key's line
        m_afterKey = false;
        return;
    }
    if (m_members.empty())
        return; // the top-level value
    if (m_buffer.size() >= kFlushBytes)
        flush();
    m_buffer += m_members.back()++ ? ",\n" : "\n";
    indent(m_members.size());
}

void JsonStream::indent(size_t depth)
{
    static constexpr char kSpaces[]
        = "                                                                ";
    for (size_t n = depth * kIndent; n > 0;) {
        const size_t chunk = std::min(n, sizeof kSpaces - 1);
        m_buffer.append(kSpaces, chunk);
        n -= chunk;
    }
}

void JsonStream::open(char bracket)
{
    nextMember();
    m_buffer += bracket;
    m_members.push_back(0);
}

void JsonStream::close(char bracket)
{
    const size_t members = m_members.back();
    m_members.pop_back();
    if (members) { // dump() writes an empty object or array as "{}" or "[]"
        m_buffer += '\n';
        indent(m_members.size());
    }
    m_buffer += bracket;
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

// Text that dump() writes as it is between quotes: printable ASCII but quote and backslash.
bool plain(std::string_view text)
{
    return std::all_of(text.begin(), text.end(),
        [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
}

} // namespace

void JsonStream::string(std::string_view text)
{
    if (plain(text)) {
        m_buffer += '"';
        m_buffer += text;
        m_buffer += '"';
    } else {
        m_buffer += dumped(nlohmann::ordered_json(text), -1);
    }
}

void JsonStream::key(std::string_view name)
{
    nextMember();
    string(name);
    m_buffer += ": ";
    m_afterKey = true;
}

void JsonStream::value(std::string_view text)
{
    nextMember();
    string(text);
}

template <typename Number> void appendNumber(std::string& out, Number number)
{
    char text[24];
    const auto end = std::to_chars(text, text + sizeof text, number).ptr;
    out.append(text, static_cast<size_t>(end - text));
}

void JsonStream::value(uint64_t number)
{
    nextMember();
    appendNumber(m_buffer, number);
}

void JsonStream::value(int64_t number)
{
    nextMember();
    appendNumber(m_buffer, number);
}

void JsonStream::null()
{
    nextMember();
    m_buffer += "null";
}

void JsonStream::value(const nlohmann::ordered_json& element)
{
    nextMember();
    // Every line break of dump(2) is layout (strings escape theirs), so the element's lines
    // move right by the depth it is written at.
    const std::string text = dumped(element, kIndent);
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != text.npos; start = end + 1) {
        m_buffer.append(text, start, end + 1 - start);
        indent(m_members.size());
    }
    m_buffer.append(text, start, text.size() - start);
    if (m_members.empty())
        flush(); // a top-level value is a whole document
}

} // namespace repack
