#include "errors.h"

#include <array>
#include <iterator>

namespace py = pybind11;

namespace repack::python {
namespace {

// The classes live as long as the interpreter: never released at exit, when Python may
// already be gone. One per row of the core's kErrorKinds, Error itself for Internal.
PyObject* errorClass = nullptr;
std::array<PyObject*, std::size(kErrorKinds)> kindClasses{};

PyObject* newClass(py::module_& m, const char* name, const char* doc, PyObject* bases)
{
    const std::string qualified = std::string("onnx_repack.") + name;
    PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
    if (!cls)
        throw py::error_already_set();
    m.add_object(name, py::handle(cls)); // the module takes its own reference
    return cls;
}

// What Python makes of each kind besides its class name (core/result.h): the docstring, and
// the builtin exception the class also is, which Python code already catches (null: none).
struct PythonSide {
    const char* doc;
    PyObject* builtin;
};
PythonSide pythonSide(ErrorKind kind)
{
    switch (kind) {
    case ErrorKind::Io:
        return {"A file operation failed (open, read, write, sync, rename, lock); the message\n"
                "names the file and the system's reason. Also an OSError.",
            PyExc_OSError};
    case ErrorKind::Corrupt:
        return {"A model, data file or plan file is not what it claims (malformed, a range past\n"
                "a file's end, a checksum that does not match). Also a ValueError.",
            PyExc_ValueError};
    case ErrorKind::Format:
        return {"The file is not an ONNX model at all (its first bytes begin no ModelProto: a web\n"
                "page, an archive, another format; or it holds no graph and no functions), as\n"
                "opposed to a damaged one (Corrupt). Also a ValueError.",
            PyExc_ValueError};
    case ErrorKind::NotFound:
        return {"A file the call needs does not exist (also a FileNotFoundError); nothing was "
                "written.",
            PyExc_FileNotFoundError};
    case ErrorKind::Usage:
        return {"Options that can never work (they do not parse, exclude each other, or name a\n"
                "data file that cannot be one); nothing was written. Also a ValueError.",
            PyExc_ValueError};
    case ErrorKind::ConsentNeeded:
        return {"The save would replace files other models read, or files the model does not\n"
                "use; nothing was written. .conflicts lists {'file', 'users', 'message'};\n"
                "force=True saves. Also a FileExistsError.",
            PyExc_FileExistsError};
    case ErrorKind::Busy:
        return {"Another save holds the lock of a folder this one writes into (wait= seconds "
                "passed).",
            nullptr};
    case ErrorKind::Changed:
        return {"The model's files changed since it was loaded (another save, another program),\n"
                "or a Tensor handle outlived a save: load, or read model.tensors, again.",
            nullptr};
    case ErrorKind::Cancelled:
        return {"The save was cancelled (cancel token, Ctrl+C, an exception in progress); "
                "nothing changed.",
            nullptr};
    case ErrorKind::OutOfMemory:
        return {"The work needed more memory than the process may allocate (a MemoryError "
                "too);\nnothing was written.",
            PyExc_MemoryError};
    case ErrorKind::Internal:
        break;
    }
    return {nullptr, nullptr};
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
    std::string kinds;
    for (const ErrorKindInfo& info : kErrorKinds)
        kinds.append(kinds.empty() ? "" : ", ").append("'").append(info.name).append("'");
    static const std::string doc = "A failure of onnx_repack, with the core's message naming "
                                   "the file and the tensor.\n\n.kind says which: "
        + kinds + " (a bug: please report it).\nEach kind but 'internal' has a subclass.";
    errorClass = newClass(m, "Error", doc.c_str(), PyExc_Exception);
    // The table of kinds, for tests and tools: name -> (class, the CLI's exit code).
    py::dict table;
    for (size_t i = 0; i < std::size(kErrorKinds); ++i) {
        const ErrorKindInfo& info = kErrorKinds[i];
        const PythonSide side = pythonSide(info.kind);
        if (!side.doc) {
            kindClasses[i] = errorClass;
        } else {
            py::tuple bases = side.builtin
                ? py::make_tuple(py::handle(errorClass), py::handle(side.builtin))
                : py::make_tuple(py::handle(errorClass));
            kindClasses[i] = newClass(m, info.pythonClass, side.doc, bases.ptr());
        }
        table[info.name] = py::make_tuple(py::handle(kindClasses[i]), info.exitCode);
    }
    m.attr("_error_kinds") = table;
}

std::string inPythonTerms(std::string message)
{
    for (size_t at; (at = message.find("(--force)")) != std::string::npos;)
        message.replace(at, 9, "(force=True)");
    return message;
}

void raise(const Error& error, py::object conflicts)
{
    const auto row = static_cast<size_t>(error.kind); // kErrorKinds is in the enum's order
    raiseAs(kindClasses[row], inPythonTerms(error.message), kErrorKinds[row].name,
        std::move(conflicts));
}

void raiseUsage(const std::string& message)
{
    raise(Error::usage(message), py::list());
}

} // namespace repack::python
