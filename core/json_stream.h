// One JSON document written to a stream piece by piece, laid out exactly as nlohmann's dump(2):
// the reports of a 100,000-tensor model never exist as one document in memory. Each element is
// a small nlohmann value serialized in place, so escaping is nlohmann's; strings that are not
// valid UTF-8 (a tensor name is any bytes) get U+FFFD for the bad bytes, as jsonText does.
#pragma once

#include <nlohmann/json.hpp>

#include <cassert>
#include <cstring>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace repack {

// `value.dump(2)`, with U+FFFD for invalid UTF-8 instead of throwing: the text JsonStream
// writes for the same document.
std::string jsonText(const nlohmann::ordered_json& value);

class JsonStream {
public:
    explicit JsonStream(std::ostream& out);
    ~JsonStream();
    JsonStream(const JsonStream&) = delete;
    JsonStream& operator=(const JsonStream&) = delete;

    // An object or array opened where a value goes (top level, after key(), in an array).
    void beginObject();
    void beginArray();
    void endObject();
    void endArray();
    // The key of the next value in the current object.
    void key(std::string_view name);
    // A whole value where a value goes, indented to its depth.
    void value(const nlohmann::ordered_json& element);
    void field(std::string_view name, const nlohmann::ordered_json& element)
    {
        key(name);
        value(element);
    }
    // Scalars written without building a value: what a report of 100,000 tensors writes most.
    void value(std::string_view text);
    void value(uint64_t number);
    void value(int64_t number);
    void null();

    // Values laid out elsewhere (a report's rows from fixed fragments, core/inspect/report.cpp):
    // the depth of the next value (the members of the innermost open object or array), the
    // separator and indentation before a member at `depth` (",\n" and 2 * depth spaces), and a
    // value `render(char* out) -> char* end` writes where a value goes, in at most `maxBytes`
    // (straight into the stream's buffer when it fits there).
    size_t depth() const { return m_members.size(); }
    std::string_view newLine(size_t depth);
    template <typename Render> void rendered(size_t maxBytes, Render&& render)
    {
        nextMember();
        write(maxBytes, render);
    }
    // `text` quoted and escaped as values are, at `out`: at most stringBytes(text.size()) bytes.
    static char* writeString(char* out, std::string_view text);
    static constexpr size_t stringBytes(size_t textBytes) { return 6 * textBytes + 2; }

private:
    template <typename Render> void write(size_t maxBytes, Render&& render)
    {
        if (maxBytes > kBufferBytes) {
            std::string text(maxBytes, '\0');
            const size_t used = static_cast<size_t>(render(text.data()) - text.data());
            assert(used <= maxBytes);
            text.resize(used);
            return putLarge(text);
        }
        if (maxBytes > kBufferBytes - m_used)
            flush();
        char* const out = m_buffer.get() + m_used;
        const size_t used = static_cast<size_t>(render(out) - out);
        assert(used <= maxBytes); // past it, render wrote past the buffer: a wrong bound
        m_used += used;
    }
    void open(char bracket);
    void close(char bracket);
    void nextMember(); // the separator and indentation before an array element or a key
    void string(std::string_view text); // quoted and escaped as dump() does
    void indent(size_t depth);
    void flush(); // the buffer to m_out
    void put(std::string_view text)
    {
        if (text.size() > kBufferBytes - m_used)
            return putLarge(text);
        std::memcpy(m_buffer.get() + m_used, text.data(), text.size());
        m_used += text.size();
    }
    void put(char c)
    {
        if (m_used == kBufferBytes)
            flush();
        m_buffer[m_used++] = c;
    }
    void putLarge(std::string_view text); // flushes first; writes past the buffer directly

    static constexpr size_t kBufferBytes = 64 << 10;
    std::ostream& m_out;
    // Written to m_out when full, and when the document is complete.
    std::unique_ptr<char[]> m_buffer;
    size_t m_used = 0;
    std::vector<std::string> m_newLines; // by depth
    std::vector<size_t> m_members; // per open object/array: members written so far
    bool m_afterKey = false;
};

} // namespace repack
