// Errors as values: a failure carries a message a user can act on (file, tensor, expected, found).
#pragma once

#include <cassert>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace repack {

// What kind of failure an Error is, for callers that branch on it (the CLI's exit code, the
// GUI's dialogs, a retry) instead of on its text, as leveldb's Status does.
enum class ErrorKind {
    Failed, // any other failure
    Cancelled, // the caller's CancelToken asked to stop; nothing was changed
    ConsentNeeded, // it would replace files other models read, or files the model does not use
    Busy, // another save holds the lock of a folder it writes into
    Changed, // the model's file changed since it was opened (another save?): open it again
    NotFound, // a file the call needs does not exist
    Usage, // options that can never work together or with this model: fix them, do not retry
    OutOfMemory, // the work needed more memory than the process may have; nothing was written
};

struct Error {
    std::string message;
    ErrorKind kind = ErrorKind::Failed;

    bool is(ErrorKind k) const { return kind == k; }
    // The same failure, its message after `context` (e.g. "cannot save m.onnx: ").
    Error prefixed(const std::string& context) const { return {context + message, kind}; }
};

// The Error of a cancelled operation: "<what> cancelled".
inline Error cancelled(const std::string& what)
{
    return Error{what + " cancelled", ErrorKind::Cancelled};
}

// The Error of work that ran out of memory (std::bad_alloc), caught where the work began:
// "<what>: out of memory ...", `what` naming the file and what was being built.
inline Error outOfMemory(const std::string& what)
{
    return Error{
        what + ": out of memory (more than this process may allocate)", ErrorKind::OutOfMemory};
}

// Runs `work` (returning a Result or a Status): running out of memory in it (std::bad_alloc,
// or a container asked for more than it can ever hold) becomes outOfMemory(what).
template <typename Work> auto guardMemory(const std::string& what, Work&& work) -> decltype(work())
{
    try {
        return work();
    } catch (const std::bad_alloc&) {
        return outOfMemory(what);
    } catch (const std::length_error&) {
        return outOfMemory(what);
    }
}

// Either a value or an Error. Small stand-in for std::expected (C++23), which GCC 12 lacks.
template <typename T> class [[nodiscard]] Result {
public:
    Result(T value)
        : m_data(std::in_place_index<0>, std::move(value))
    {
    }
    Result(Error error)
        : m_data(std::in_place_index<1>, std::move(error))
    {
    }

    bool ok() const { return m_data.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() &
    {
        assert(ok());
        return std::get<0>(m_data);
    }
    const T& value() const&
    {
        assert(ok());
        return std::get<0>(m_data);
    }
    T&& value() &&
    {
        assert(ok());
        return std::get<0>(std::move(m_data));
    }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const Error& error() const
    {
        assert(!ok());
        return std::get<1>(m_data);
    }

private:
    std::variant<T, Error> m_data;
};

// Success or an Error, for operations that return nothing.
class [[nodiscard]] Status {
public:
    Status() = default;
    Status(Error error)
        : m_error(std::move(error))
        , m_failed(true)
    {
    }
    static Status success() { return {}; }

    bool ok() const { return !m_failed; }
    explicit operator bool() const { return ok(); }
    const Error& error() const
    {
        assert(m_failed);
        return m_error;
    }

private:
    Error m_error;
    bool m_failed = false;
};

} // namespace repack
