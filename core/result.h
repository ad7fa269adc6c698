// Errors as values: a failure carries a message a user can act on (file, tensor, expected, found).
#pragma once

#include <cassert>
#include <cstddef>
#include <iterator>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace repack {

// What kind of failure an Error is, for callers that branch on it (the CLI's exit code, the
// Python exception class, the GUI's dialogs, a retry) instead of on its text, as leveldb's
// Status does. Every Error names its kind (the constructors below): none is a default.
enum class ErrorKind {
    Io, // a file operation failed (open, read, write, sync, rename, lock): the system says why
    Corrupt, // a model, data file or plan file is not what it claims (malformed, out of range,
             // a checksum that does not match)
    Format, // the file is not of the kind asked for at all (not an ONNX model: a web page, an
            // archive, another format), as opposed to one of that kind that is damaged
    NotFound, // a file the call needs does not exist
    Usage, // options that can never work together or with this model: fix them, do not retry
    ConsentNeeded, // it would replace files other models read, or files the model does not use
    Busy, // another save holds the lock of a folder it writes into
    Changed, // the model's file changed since it was opened (another save?): open it again
    Cancelled, // the caller's CancelToken asked to stop; nothing was changed
    OutOfMemory, // the work needed more memory than the process may have; nothing was written
    Internal, // a state the tool should never reach (a bug): the message says which
};

// Every kind, once, with what each front end makes of it: the one table the CLI's exit codes
// and the Python package's exception classes come from (tests check both cover every kind).
struct ErrorKindInfo {
    ErrorKind kind;
    const char* name; // Error.kind in Python, "kind" in JSON
    int exitCode; // the CLI's (SPEC 6: 1 failed, 2 usage; 3 needs --force)
    const char* pythonClass; // onnx_repack.<pythonClass>
};
inline constexpr ErrorKindInfo kErrorKinds[] = {
    {ErrorKind::Io, "io", 1, "IoError"},
    {ErrorKind::Corrupt, "corrupt", 1, "Corrupt"},
    {ErrorKind::Format, "format", 1, "FormatError"},
    {ErrorKind::NotFound, "not_found", 1, "NotFound"},
    {ErrorKind::Usage, "usage", 2, "UsageError"},
    {ErrorKind::ConsentNeeded, "consent_needed", 3, "ConsentRequired"},
    {ErrorKind::Busy, "busy", 1, "Busy"},
    {ErrorKind::Changed, "changed", 1, "Changed"},
    {ErrorKind::Cancelled, "cancelled", 1, "Cancelled"},
    {ErrorKind::OutOfMemory, "out_of_memory", 1, "OutOfMemory"},
    {ErrorKind::Internal, "internal", 1, "Error"},
};
// One row per kind, in the enum's order: a kind added without its row does not compile.
constexpr bool everyKindHasItsRow()
{
    if (std::size(kErrorKinds) != static_cast<size_t>(ErrorKind::Internal) + 1)
        return false;
    for (size_t i = 0; i < std::size(kErrorKinds); ++i)
        if (kErrorKinds[i].kind != static_cast<ErrorKind>(i))
            return false;
    return true;
}
static_assert(everyKindHasItsRow());
constexpr const ErrorKindInfo& kindInfo(ErrorKind kind)
{
    return kErrorKinds[static_cast<size_t>(kind)];
}

struct Error {
    Error(std::string text, ErrorKind k)
        : message(std::move(text))
        , kind(k)
    {
    }
    // One named constructor per kind.
    static Error io(std::string text) { return {std::move(text), ErrorKind::Io}; }
    static Error corrupt(std::string text) { return {std::move(text), ErrorKind::Corrupt}; }
    static Error format(std::string text) { return {std::move(text), ErrorKind::Format}; }
    static Error notFound(std::string text) { return {std::move(text), ErrorKind::NotFound}; }
    static Error usage(std::string text) { return {std::move(text), ErrorKind::Usage}; }
    static Error consentNeeded(std::string text)
    {
        return {std::move(text), ErrorKind::ConsentNeeded};
    }
    static Error busy(std::string text) { return {std::move(text), ErrorKind::Busy}; }
    static Error changed(std::string text) { return {std::move(text), ErrorKind::Changed}; }
    static Error internal(std::string text) { return {std::move(text), ErrorKind::Internal}; }

    std::string message;
    ErrorKind kind;

    bool is(ErrorKind k) const { return kind == k; }
    // The same failure, its message after `context` (e.g. "cannot save m.onnx: ").
    Error prefixed(const std::string& context) const { return {context + message, kind}; }
};

// The Error of a cancelled operation: "<what> cancelled".
inline Error cancelled(const std::string& what)
{
    return {what + " cancelled", ErrorKind::Cancelled};
}

// The Error of work that ran out of memory (std::bad_alloc), caught where the work began:
// "<what>: out of memory ...", `what` naming the file and what was being built.
inline Error outOfMemory(const std::string& what)
{
    return {what + ": out of memory (more than this process may allocate)", ErrorKind::OutOfMemory};
}

// Thrown where a library loaded on first use (core/shared_library.h) is needed by code with no
// error path of its own (a digest's constructor): guardMemory makes it the operation's error.
class LibraryUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Runs `work` (returning a Result or a Status): running out of memory in it (std::bad_alloc,
// or a container asked for more than it can ever hold) becomes outOfMemory(what), and a library
// loaded on first use that cannot be (core/shared_library.h) an Io error saying which.
template <typename Work> auto guardMemory(const std::string& what, Work&& work) -> decltype(work())
{
    try {
        return work();
    } catch (const std::bad_alloc&) {
        return outOfMemory(what);
    } catch (const std::length_error&) {
        return outOfMemory(what);
    } catch (const LibraryUnavailable& e) {
        return Error::io(what + ": " + e.what());
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
    {
    }
    static Status success() { return {}; }

    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const Error& error() const
    {
        assert(m_error);
        return *m_error;
    }

private:
    std::optional<Error> m_error;
};

} // namespace repack
