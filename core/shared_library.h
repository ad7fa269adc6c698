// A library loaded the first time it is needed (dlopen), never at start-up: libcurl for remote
// models, libcrypto for checksums. A command that needs neither maps neither (libcrypto alone
// costs every process memory for its relocations and symbol tables).
// Code with no error path of its own (a digest's constructor) throws LibraryUnavailable
// (result.h) when its library cannot be loaded; guardMemory makes that the operation's error.
#pragma once

#include "result.h"

#include <string>

namespace repack {

// The library `soname` (RTLD_NOW | RTLD_LOCAL: its symbols serve our pointers only, never
// another library's lookups), or why it cannot be loaded; `purpose` and `package` say what needs
// it and what installs it.
Result<void*> openSharedLibrary(
    const std::string& soname, const std::string& purpose, const std::string& package);
void closeSharedLibrary(void* library);

// Looks up `name` in `library` as a function of `to`'s type; false when it is not there.
bool bindSymbol(void* library, const char* name, void*& to);
template <typename Function> bool bindFunction(void* library, const char* name, Function*& to)
{
    void* symbol = nullptr;
    const bool found = bindSymbol(library, name, symbol);
    to = reinterpret_cast<Function*>(symbol);
    return found;
}

// Binds the functions a library must have, remembering the first it lacks:
//     SymbolBinder need(library);  need("name", pointer); ...
//     if (Status s = need.done(soname, "libcurl"); !s) ...   (the library is closed then)
class SymbolBinder {
public:
    explicit SymbolBinder(void* library)
        : m_library(library)
    {
    }
    template <typename Function> void operator()(const char* name, Function*& to)
    {
        if (!m_missing && !bindFunction(m_library, name, to))
            m_missing = name;
    }
    // Fine when every function was found; else closes the library and says `soname` is not a
    // usable `what`, naming the first function it lacks.
    Status done(const std::string& soname, const std::string& what);

private:
    void* m_library;
    const char* m_missing = nullptr;
};

} // namespace repack
