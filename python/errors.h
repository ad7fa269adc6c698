// The exceptions of onnx_repack: Error (with .kind) and its subclasses, one per kind of the
// core's errors (core/result.h) that a script branches on, raised with the core's message.
#pragma once

#include "core/result.h"

#include <pybind11/pybind11.h>

#include <string>

namespace repack::python {

// Adds Error and a subclass per kind of core/result.h's kErrorKinds (IoError, Corrupt,
// NotFound, UsageError, ConsentRequired, Busy, Changed, Cancelled, OutOfMemory) to `m`, and
// `_error_kinds`: {kind name: (class, the CLI's exit code)}.
void registerErrors(pybind11::module_& m);

// Raises the exception of `error`'s kind (as a pybind11::error_already_set), its .kind the
// kind's name; ConsentRequired with `conflicts` (a list of {"file", "users", "message"}).
[[noreturn]] void raise(const Error& error, pybind11::object conflicts = pybind11::list());

// A core message as Python users read it: consent is the keyword force=True, not --force.
std::string inPythonTerms(std::string message);

// Raises UsageError (also a ValueError): options that cannot be used, before anything is read.
[[noreturn]] void raiseUsage(const std::string& message);

// Unwraps a Result, raising its error.
template <typename T> T take(Result<T>&& result)
{
    if (!result)
        raise(result.error());
    return std::move(result).value();
}
inline void check(const Status& status)
{
    if (!status)
        raise(status.error());
}

} // namespace repack::python
