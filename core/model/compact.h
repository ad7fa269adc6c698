// Small value types for fields that a million-tensor index holds once per tensor: each keeps
// the cost of what most tensors do not have to a pointer or nothing, where std::optional,
// std::vector and a std::string embedded by value cost 16 to 128 bytes each.
#pragma once

#include <algorithm>
#include <atomic>
#include <compare>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace repack {

// An optional T that is rare: a pointer, null when absent, copied deeply. Reads of an absent
// value see a default T; writes allocate it.
template <typename T> class Rare {
public:
    Rare() = default;
    Rare(const Rare& other)
        : m_value(other.m_value ? std::make_unique<T>(*other.m_value) : nullptr)
    {
    }
    Rare(Rare&&) noexcept = default;
    Rare& operator=(const Rare& other)
    {
        if (this != &other)
            m_value = other.m_value ? std::make_unique<T>(*other.m_value) : nullptr;
        return *this;
    }
    Rare& operator=(Rare&&) noexcept = default;
    Rare& operator=(T value)
    {
        m_value = std::make_unique<T>(std::move(value));
        return *this;
    }

    bool present() const { return m_value != nullptr; }
    const T& operator*() const { return m_value ? *m_value : none(); }
    const T* operator->() const { return &**this; }
    T& operator*()
    {
        if (!m_value)
            m_value = std::make_unique<T>();
        return *m_value;
    }
    T* operator->() { return &**this; }
    void reset() { m_value.reset(); }

private:
    static const T& none()
    {
        static const T value{};
        return value;
    }
    std::unique_ptr<T> m_value;
};

// One immutable T that many hold, in 8 bytes (a std::shared_ptr takes 16): T and its count of
// holders in one allocation, freed by the last holder. Null when default-constructed.
template <typename T> class Shared {
public:
    Shared() = default;
    static Shared make(T value) { return Shared(new Node{std::move(value), {1}}); }
    Shared(const Shared& other)
        : m_node(other.m_node)
    {
        if (m_node)
            m_node->holders.fetch_add(1, std::memory_order_relaxed);
    }
    Shared(Shared&& other) noexcept
        : m_node(std::exchange(other.m_node, nullptr))
    {
    }
    Shared& operator=(Shared other) noexcept
    {
        std::swap(m_node, other.m_node);
        return *this;
    }
    ~Shared()
    {
        if (m_node && m_node->holders.fetch_sub(1, std::memory_order_acq_rel) == 1)
            delete m_node;
    }

    const T* get() const { return m_node ? &m_node->value : nullptr; }
    const T& operator*() const { return m_node->value; }
    const T* operator->() const { return &m_node->value; }
    explicit operator bool() const { return m_node != nullptr; }
    // The same object (not merely equal values).
    bool operator==(const Shared& other) const { return m_node == other.m_node; }

private:
    struct Node {
        T value;
        mutable std::atomic<size_t> holders;
    };
    explicit Shared(Node* node)
        : m_node(node)
    {
    }
    Node* m_node = nullptr;
};

// A std::string that every tensor of a graph holds (its scope), in 8 bytes instead of 32: one
// Shared<std::string> per graph. Reads as a const std::string& (or a string_view); assigning
// a string makes a holder of its own.
class SharedString {
public:
    SharedString() = default;
    SharedString(std::string text)
        : m_text(Shared<std::string>::make(std::move(text)))
    {
    }
    SharedString(const char* text)
        : SharedString(std::string(text))
    {
    }
    SharedString(std::string_view text)
        : SharedString(std::string(text))
    {
    }

    const std::string& str() const { return m_text ? *m_text : none(); }
    operator const std::string&() const { return str(); }
    operator std::string_view() const { return str(); }
    bool empty() const { return str().empty(); }
    size_t size() const { return str().size(); }
    const char* c_str() const { return str().c_str(); }
    // The same shared text (a graph's tensors), or equal texts.
    bool operator==(const SharedString& other) const
    {
        return m_text == other.m_text || str() == other.str();
    }
    bool operator==(std::string_view other) const { return str() == other; }
    bool operator==(const std::string& other) const { return str() == other; }
    bool operator==(const char* other) const { return str() == other; }
    std::strong_ordering operator<=>(const SharedString& other) const
    {
        return str() <=> other.str();
    }

private:
    static const std::string& none()
    {
        static const std::string empty;
        return empty;
    }
    Shared<std::string> m_text;
};

inline std::string operator+(const SharedString& a, const std::string& b)
{
    return a.str() + b;
}
inline std::string operator+(const std::string& a, const SharedString& b)
{
    return a + b.str();
}
inline std::string operator+(const SharedString& a, const char* b)
{
    return a.str() + b;
}
inline std::string operator+(const char* a, const SharedString& b)
{
    return a + b.str();
}
inline std::string operator+(const SharedString& a, char b)
{
    return a.str() + b;
}
// nlohmann::json (and any JSON type with string assignment) writes it as its text.
template <typename Json> void to_json(Json& json, const SharedString& text)
{
    json = text.str();
}

// std::optional<T> in the size of T: `Absent` (a value no valid T takes) stands for nullopt.
template <typename T, T Absent> class Compact {
public:
    Compact() = default;
    Compact(std::nullopt_t) { }
    Compact(T value)
        : m_value(value)
    {
    }
    Compact(const std::optional<T>& value)
        : m_value(value.value_or(Absent))
    {
    }

    bool has_value() const { return !(m_value == Absent); }
    explicit operator bool() const { return has_value(); }
    const T& operator*() const { return m_value; }
    const T* operator->() const { return &m_value; }
    const T& value() const
    {
        if (!has_value())
            throw std::bad_optional_access();
        return m_value;
    }
    T value_or(T fallback) const { return has_value() ? m_value : fallback; }
    void reset() { m_value = Absent; }
    operator std::optional<T>() const
    {
        return has_value() ? std::optional<T>(m_value) : std::nullopt;
    }
    bool operator==(const Compact& other) const { return m_value == other.m_value; }

private:
    T m_value = Absent;
};

// A tensor's dims: up to two inline (most weights have one or two), more on the heap.
class Dims {
public:
    Dims() = default;
    Dims(std::span<const int64_t> dims) { assign(dims); }
    Dims(const std::vector<int64_t>& dims)
        : Dims(std::span<const int64_t>(dims))
    {
    }
    Dims(std::initializer_list<int64_t> dims)
        : Dims(std::span<const int64_t>(dims.begin(), dims.size()))
    {
    }
    Dims(const Dims& other)
        : Dims(std::span<const int64_t>(other.begin(), other.size()))
    {
    }
    Dims& operator=(const Dims& other)
    {
        if (this != &other) {
            release();
            assign(std::span<const int64_t>(other.begin(), other.size()));
        }
        return *this;
    }
    Dims(Dims&& other) noexcept { take(other); }
    Dims& operator=(Dims&& other) noexcept
    {
        if (this != &other) {
            release();
            take(other);
        }
        return *this;
    }
    ~Dims() { release(); }

    size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    const int64_t* begin() const { return onHeap() ? m_heap : m_inline; }
    const int64_t* end() const { return begin() + m_size; }
    int64_t operator[](size_t i) const { return begin()[i]; }
    std::vector<int64_t> toVector() const { return {begin(), end()}; }
    operator std::span<const int64_t>() const { return {begin(), m_size}; }

    bool operator==(const Dims& other) const
    {
        return std::equal(begin(), end(), other.begin(), other.end());
    }
    bool operator==(const std::vector<int64_t>& other) const
    {
        return std::equal(begin(), end(), other.begin(), other.end());
    }
    std::strong_ordering operator<=>(const Dims& other) const
    {
        return std::lexicographical_compare_three_way(begin(), end(), other.begin(), other.end());
    }

private:
    static constexpr size_t kInline = 2;
    bool onHeap() const { return m_size > kInline; }
    // Allocates before it counts: when the allocation throws, the dims are left empty, never
    // a size that claims a heap block there is not (release() would free garbage).
    void assign(std::span<const int64_t> dims)
    {
        int64_t* to = m_inline;
        if (dims.size() > kInline)
            to = m_heap = new int64_t[dims.size()];
        m_size = dims.size();
        std::copy(dims.begin(), dims.end(), to);
    }
    void take(Dims& other)
    {
        m_size = other.m_size;
        if (onHeap())
            m_heap = other.m_heap;
        else
            std::copy(other.m_inline, other.m_inline + m_size, m_inline);
        other.m_size = 0;
    }
    void release()
    {
        if (onHeap())
            delete[] m_heap;
        m_size = 0;
    }

    union {
        int64_t m_inline[kInline] = {};
        int64_t* m_heap;
    };
    size_t m_size = 0;
};

} // namespace repack
