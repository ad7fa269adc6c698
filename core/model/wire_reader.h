// Reads the protobuf wire format one field at a time, as protobuf's own parser accepts it: a
// tag of at most 5 bytes with a non-zero field number, varints of at most 10 bytes, lengths
// that stay inside their message, groups skipped to their end tag. Nothing is allocated and
// nothing outside the given bytes is read. core/model/wire_scan.cpp and core/model/tensor_index.cpp
// walk models with it.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace repack::wire {

constexpr int kMaxDepth = 100; // protobuf's default recursion limit

enum WireType : int { Varint = 0, Fixed64 = 1, Len = 2, StartGroup = 3, EndGroup = 4, Fixed32 = 5 };

// One field: its number and wire type, where its tag starts, and its value: `varint` for
// Varint, the value's bytes [begin, end) for Len, Fixed32 and Fixed64 (and for a group, its
// fields).
struct Field {
    uint32_t number = 0;
    int type = 0;
    uint64_t tagAt = 0;
    uint64_t tagEnd = 0; // where the value (or, for Len, its length prefix) starts
    uint64_t begin = 0;
    uint64_t end = 0;
    uint64_t varint = 0;
};

class Reader {
public:
    // Reads [begin, end) of `data`, the message at nesting `depth`.
    Reader(const unsigned char* data, uint64_t begin, uint64_t end, int depth = 0)
        : m_data(data)
        , m_pos(begin)
        , m_end(end)
        , m_depth(depth)
    {
    }

    // The next field into `f`; false at the end of the message or on an error (error() says).
    bool next(Field& f)
    {
        if (m_pos >= m_end || !m_error.empty())
            return false;
        f = Field{};
        f.tagAt = m_pos;
        if (!tag(m_pos, f.number, f.type))
            return false;
        f.tagEnd = m_pos;
        // Most fields of a model are length-delimited: read here, not through value().
        return f.type == Len ? lengthDelimited(f) : value(f.type, f.number, f, m_depth);
    }

    bool failed() const { return !m_error.empty(); }
    // What was wrong and at which byte of the data, e.g. "truncated varint at byte 12".
    const std::string& error() const { return m_error; }
    int depth() const { return m_depth; }

    // A reader of the message in `f`'s value (a Len field), one level deeper; fails when that
    // is deeper than protobuf allows.
    bool nested(const Field& f, Reader& out)
    {
        if (m_depth + 1 > kMaxDepth)
            return fail("messages nested deeper than " + std::to_string(kMaxDepth), f.tagAt);
        out = Reader(m_data, f.begin, f.end, m_depth + 1);
        return true;
    }
    // Takes an error found by a nested reader, so that the outer walk stops too.
    bool adopt(const Reader& inner)
    {
        if (inner.failed() && m_error.empty())
            m_error = inner.error();
        return !failed();
    }

    std::string_view text(const Field& f) const
    {
        return {reinterpret_cast<const char*>(m_data) + f.begin, f.end - f.begin};
    }
    const unsigned char* data() const { return m_data; }

    // Reads a varint at `pos` (advanced past it), failing past `end`.
    bool varint(uint64_t& pos, uint64_t end, uint64_t& value)
    {
        if (pos < end && m_data[pos] < 0x80) { // one byte: most tags and short lengths
            value = m_data[pos++];
            return true;
        }
        return longVarint(pos, end, value);
    }

    // Reads a tag at `pos` (advanced past it), failing past the end of the message.
    bool tag(uint64_t& pos, uint32_t& field, int& type)
    {
        const uint64_t at = pos;
        uint64_t t = 0;
        if (!varint(pos, m_end, t))
            return false;
        // As protobuf reads a tag: at most 5 bytes, of which it keeps the low 32 bits.
        if (pos - at > 5)
            return fail("field tag longer than 5 bytes", at);
        t &= std::numeric_limits<uint32_t>::max();
        field = static_cast<uint32_t>(t >> 3);
        type = static_cast<int>(t & 7);
        if (field == 0)
            return fail("field number 0", at);
        return true;
    }

    [[gnu::cold, gnu::noinline]] bool fail(const std::string& what, uint64_t at)
    {
        if (m_error.empty())
            m_error = what + " at byte " + std::to_string(at);
        return false;
    }

private:
    [[gnu::noinline]] bool longVarint(uint64_t& pos, uint64_t end, uint64_t& value)
    {
        const uint64_t start = pos;
        value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos >= end)
                return fail("truncated varint", start);
            const unsigned char b = m_data[pos++];
            value |= static_cast<uint64_t>(b & 0x7f) << shift;
            if (!(b & 0x80))
                return true;
        }
        return fail("varint longer than 10 bytes", start);
    }

    // A Len value at m_pos: its length, then that many bytes inside the message.
    bool lengthDelimited(Field& f)
    {
        const uint64_t lengthAt = m_pos;
        uint64_t len = 0;
        if (!varint(m_pos, m_end, len))
            return false;
        if (len > m_end - m_pos)
            return lengthPastEnd(len, lengthAt);
        f.begin = m_pos;
        m_pos += len;
        f.end = m_pos;
        return true;
    }
    [[gnu::cold, gnu::noinline]] bool lengthPastEnd(uint64_t len, uint64_t at)
    {
        return fail("length " + std::to_string(len) + " runs past the end of its message (byte "
                + std::to_string(m_end) + ")",
            at);
    }

    // Reads the value of a field of `type` at m_pos into f (begin, end, varint).
    bool value(int type, uint32_t field, Field& f, int depth)
    {
        const uint64_t at = f.tagAt;
        switch (type) {
        case Varint:
            f.begin = m_pos;
            if (!varint(m_pos, m_end, f.varint))
                return false;
            f.end = m_pos;
            return true;
        case Fixed64:
        case Fixed32: {
            const uint64_t width = type == Fixed64 ? 8 : 4;
            if (m_end - m_pos < width)
                return fail("truncated fixed-width value", at);
            f.begin = m_pos;
            m_pos += width;
            f.end = m_pos;
            return true;
        }
        case Len:
            return lengthDelimited(f);
        case StartGroup: { // fields up to the matching end-group tag
            if (depth + 1 > kMaxDepth)
                return fail("groups nested deeper than " + std::to_string(kMaxDepth), at);
            f.begin = m_pos;
            while (true) {
                const uint64_t innerAt = m_pos;
                if (m_pos >= m_end)
                    return fail("group without its end-group tag", at);
                uint32_t innerField = 0;
                int innerType = 0;
                if (!tag(m_pos, innerField, innerType))
                    return false;
                if (innerType == EndGroup) {
                    if (innerField != field)
                        return fail("end-group tag of another group", innerAt);
                    f.end = innerAt;
                    return true;
                }
                Field inner;
                inner.tagAt = innerAt;
                if (!value(innerType, innerField, inner, depth + 1))
                    return false;
            }
        }
        case EndGroup:
            return fail("end-group tag without a group", at);
        default:
            return fail("invalid wire type " + std::to_string(type), at);
        }
    }

    const unsigned char* m_data;
    uint64_t m_pos;
    uint64_t m_end;
    int m_depth;
    std::string m_error;
};

} // namespace repack::wire
