#include "curl_library.h"

#include <dlfcn.h>

#include <mutex>

namespace repack {

namespace {

std::string versionText(unsigned number)
{
    return std::to_string((number >> 16) & 0xff) + "." + std::to_string((number >> 8) & 0xff) + "."
        + std::to_string(number & 0xff);
}

// Looks up `name` in `library` as a function of `to`'s type; false when it is not there.
template <typename Function> bool bind(void* library, const char* name, Function*& to)
{
    to = reinterpret_cast<Function*>(::dlsym(library, name));
    return to != nullptr;
}

} // namespace

Result<CurlLibrary> loadCurlLibrary(const std::string& soname)
{
    // RTLD_LOCAL: libcurl's symbols serve these pointers only, never another library's lookups.
    void* library = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char* why = ::dlerror();
        return Error::io("reading models over HTTP needs libcurl (" + soname
            + "), which cannot be loaded: " + (why ? why : "unknown reason")
            + " (on Debian: apt-get install libcurl4)");
    }
    CurlLibrary curl;
    curl_version_info_data* (*versionInfo)(CURLversion) = nullptr;
    const char* missing = nullptr;
    const auto need = [&](const char* name, auto*& to) {
        if (!missing && !bind(library, name, to))
            missing = name;
    };
    need("curl_version_info", versionInfo);
    need("curl_global_init", curl.globalInit);
    need("curl_easy_init", curl.easyInit);
    need("curl_easy_setopt", curl.easySetopt);
    need("curl_easy_perform", curl.easyPerform);
    need("curl_easy_getinfo", curl.easyGetinfo);
    need("curl_easy_reset", curl.easyReset);
    need("curl_easy_cleanup", curl.easyCleanup);
    need("curl_easy_strerror", curl.easyStrerror);
    need("curl_slist_append", curl.slistAppend);
    need("curl_slist_free_all", curl.slistFreeAll);
    need("curl_url", curl.urlNew);
    need("curl_url_cleanup", curl.urlCleanup);
    need("curl_url_set", curl.urlSet);
    need("curl_url_get", curl.urlGet);
    need("curl_free", curl.freeText);
    if (missing) {
        ::dlclose(library);
        return Error::io(soname + " is not a usable libcurl: it has no " + missing);
    }
    const curl_version_info_data* info = versionInfo(CURLVERSION_NOW);
    const unsigned version = info ? info->version_num : 0;
    if (version < kMinimumCurlVersion) {
        ::dlclose(library);
        return Error::io(soname + " is libcurl " + versionText(version)
            + "; reading over HTTP needs " + versionText(kMinimumCurlVersion) + " or newer");
    }
    curl.version = versionText(version);
    if (const CURLcode code = curl.globalInit(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
        const std::string why = curl.easyStrerror(code);
        ::dlclose(library);
        return Error::io(soname + " could not be initialised: " + why);
    }
    return curl;
}

Result<const CurlLibrary*> curlLibrary()
{
    static const Result<CurlLibrary> loaded = loadCurlLibrary("libcurl.so.4");
    if (!loaded)
        return loaded.error();
    return &*loaded;
}

} // namespace repack
