#include "errors.h"

namespace py = pybind11;

namespace repack::python {
namespace {

// The classes live as long as the interpreter: never released at exit, when Python may
// already be gone.
struct Classes {
    PyObject* error = nullptr;
    PyObject* consent = nullptr;
    PyObject* cancelled = nullptr;
    PyObject* busy = nullptr;
    PyObject* usage = nullptr;
    PyObject* outOfMemory = nullptr;
    PyObject* notFound = nullptr;
};
Classes classes;

PyObject* newClass(py::module_& m, const char* name, const char* doc, PyObject* bases)
{
    const std::string qualified = std::string("onnx_repack.") + name;
    PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
    if (!cls)
        throw py::error_already_set();
    m.add_object(name, py::handle(cls)); // the module takes its own reference
    return cls;
}

// A subclass of `error` that is also the builtin exception `builtin`, which Python code
// already catches (ValueError, MemoryError, FileExistsError, FileNotFoundError).
PyObject* newClass(
    py::module_& m, const char* name, const char* doc, PyObject* error, PyObject* builtin)
{
    py::tuple bases = py::make_tuple(py::handle(error), py::handle(builtin));
    return newClass(m, name, doc, bases.ptr());
}

std::string kindText(ErrorKind kind)
{
    switch (kind) {
    case ErrorKind::Cancelled:
        return "cancelled";
    case ErrorKind::ConsentNeeded:
        return "consent_needed";
    case ErrorKind::Busy:
        return "busy";
    case ErrorKind::Changed:
        return "changed";
    case ErrorKind::NotFound:
        return "not_found";
    case ErrorKind::Usage:
        return "usage";
    case ErrorKind::OutOfMemory:
        return "out_of_memory";
    case ErrorKind::Failed:
        break;
    }
    return "failed";
}

[[noreturn]] void raiseAs(
    PyObject* cls, const std::string& message, const std::string& kind, py::object conflicts)
{
    py::object exc = py::reinterpret_borrow<py::object>(cls)(message);
    exc.attr("kind") = kind;
    exc.attr("conflicts") = std::move(conflicts);
    PyErr_SetObject(cls, exc.ptr());
    throw py::error_already_set();
}

} // namespace

void registerErrors(py::module_& m)
{
    classes.error = newClass(m, "Error",
        "A failure of onnx_repack, with the core's message naming the file and the tensor.\n\n"
        ".kind says which: 'failed', 'not_found', 'cancelled', 'consent_needed', 'busy',\n"
        "'changed' (the model's files changed since it was loaded, or a Tensor handle outlived\n"
        "a save: load or read model.tensors again), 'usage' or 'out_of_memory'.",
        PyExc_Exception);
    // Also the builtins Python code already catches: FileExistsError for a refusal to
    // replace existing files, FileNotFoundError for a missing one.
    classes.consent = newClass(m, "ConsentRequired",
        "The save would replace files other models read, or files the model does not use;\n"
        "nothing was written. .conflicts lists {'file', 'users', 'message'}; force=True saves.\n"
        "Also a FileExistsError.",
        classes.error, PyExc_FileExistsError);
    classes.notFound = newClass(m, "NotFound",
        "A file the call needs does not exist (also a FileNotFoundError); nothing was written.",
        classes.error, PyExc_FileNotFoundError);
    classes.cancelled = newClass(m, "Cancelled",
        "The save was cancelled (cancel token, Ctrl+C, an exception in progress); nothing "
        "changed.",
        classes.error);
    classes.busy = newClass(m, "Busy",
        "Another save holds the lock of a folder this one writes into (wait= seconds passed).",
        classes.error);
    classes.usage = newClass(m, "UsageError",
        "Options that can never work (they do not parse, exclude each other, or name a data\n"
        "file that cannot be one); nothing was written.",
        classes.error, PyExc_ValueError);
    classes.outOfMemory = newClass(m, "OutOfMemory",
        "The work needed more memory than the process may allocate (a MemoryError too);\n"
        "nothing was written.",
        classes.error, PyExc_MemoryError);
}

std::string inPythonTerms(std::string message)
{
    for (size_t at; (at = message.find("(--force)")) != std::string::npos;)
        message.replace(at, 9, "(force=True)");
    return message;
}

void raise(const Error& error, py::object conflicts)
{
    PyObject* cls = classes.error;
    if (error.kind == ErrorKind::Cancelled)
        cls = classes.cancelled;
    else if (error.kind == ErrorKind::ConsentNeeded)
        cls = classes.consent;
    else if (error.kind == ErrorKind::Busy)
        cls = classes.busy;
    else if (error.kind == ErrorKind::Usage)
        cls = classes.usage;
    else if (error.kind == ErrorKind::OutOfMemory)
        cls = classes.outOfMemory;
    else if (error.kind == ErrorKind::NotFound)
        cls = classes.notFound;
    raiseAs(cls, inPythonTerms(error.message), kindText(error.kind), std::move(conflicts));
}

void raiseUsage(const std::string& message)
{
    raiseAs(classes.usage, message, "usage", py::list());
}

} // namespace repack::python
