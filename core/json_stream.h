// One JSON document written to a stream piece by piece, laid out exactly as nlohmann's dump(2):
// the reports of a 100,000-tensor model never exist as one document in memory. Each element is
// a small nlohmann value serialized in place, so escaping is nlohmann's; strings that are not
// valid UTF-8 (a tensor name is any bytes) get U+FFFD for the bad bytes, as jsonText does.
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
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

private:
    void open(char bracket);
    void close(char bracket);
    void nextMember(); // the separator and indentation before an array element or a key
    void string(std::string_view text); // quoted and escaped as dump() does
    void indent(size_t depth);
    void flush(); // the buffer to m_out

    std::ostream& m_out;
    std::string m_buffer; // written to m_out in blocks, and when the document is complete
    std::vector<size_t> m_members; // per open object/array: members written so far
    bool m_afterKey = false;
};

} // namespace repack
