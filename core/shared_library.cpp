#include "shared_library.h"

#include <dlfcn.h>

namespace repack {

Result<void*> openSharedLibrary(
    const std::string& soname, const std::string& purpose, const std::string& package)
{
    void* library = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char* why = ::dlerror();
        return Error::io(purpose + " needs " + soname + ", which cannot be loaded: "
            + (why ? why : "unknown reason") + " (on Debian: apt-get install " + package + ")");
    }
    return library;
}

void closeSharedLibrary(void* library)
{
    if (library)
        ::dlclose(library);
}

bool bindSymbol(void* library, const char* name, void*& to)
{
    to = ::dlsym(library, name);
    return to != nullptr;
}

Status SymbolBinder::done(const std::string& soname, const std::string& what)
{
    if (!m_missing)
        return {};
    closeSharedLibrary(m_library);
    return Error::io(soname + " is not a usable " + what + ": it has no " + m_missing);
}

} // namespace repack
