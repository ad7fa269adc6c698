#include "json_stream.h"

#include <algorithm>
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
{
}

void JsonStream::nextMember()
{
    if (m_afterKey) { // the value of a key: on the key's line
        m_afterKey = false;
        return;
    }
    if (m_members.empty())
        return; // the top-level value
    m_out << (m_members.back()++ ? ",\n" : "\n");
    indent(m_members.size());
}

void JsonStream::indent(size_t depth)
{
    static constexpr char kSpaces[]
        = "                                                                ";
    for (size_t n = depth * kIndent; n > 0;) {
        const size_t chunk = std::min(n, sizeof kSpaces - 1);
        m_out.write(kSpaces, static_cast<std::streamsize>(chunk));
        n -= chunk;
    }
}

void JsonStream::open(char bracket)
{
    nextMember();
    m_out.put(bracket);
    m_members.push_back(0);
}

void JsonStream::close(char bracket)
{
    const size_t members = m_members.back();
    m_members.pop_back();
    if (members) { // dump() writes an empty object or array as "{}" or "[]"
        m_out.put('\n');
        indent(m_members.size());
    }
    m_out.put(bracket);
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
    if (plain(text))
        m_out << '"' << text << '"';
    else
        m_out << dumped(nlohmann::ordered_json(text), -1);
}

void JsonStream::key(std::string_view name)
{
    nextMember();
    string(name);
    m_out << ": ";
    m_afterKey = true;
}

void JsonStream::value(std::string_view text)
{
    nextMember();
    string(text);
}

void JsonStream::value(uint64_t number)
{
    nextMember();
    m_out << number;
}

void JsonStream::value(int64_t number)
{
    nextMember();
    m_out << number;
}

void JsonStream::null()
{
    nextMember();
    m_out << "null";
}

void JsonStream::value(const nlohmann::ordered_json& element)
{
    nextMember();
    // Every line break of dump(2) is layout (strings escape theirs), so the element's lines
    // move right by the depth it is written at.
    const std::string text = dumped(element, kIndent);
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != text.npos; start = end + 1) {
        m_out.write(text.data() + start, static_cast<std::streamsize>(end + 1 - start));
        indent(m_members.size());
    }
    m_out.write(text.data() + start, static_cast<std::streamsize>(text.size() - start));
}

} // namespace repack
