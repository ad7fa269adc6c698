#include "curl_library.h"

#include "core/shared_library.h"

#include <mutex>

namespace repack {

namespace {

std::string versionText(unsigned number)
{
    return std::to_string((number >> 16) & 0xff) + "." + std::to_string((number >> 8) & 0xff) + "."
        + std::to_string(number & 0xff);
}

} // namespace

Result<CurlLibrary> loadCurlLibrary(const std::string& soname)
{
    auto opened = openSharedLibrary(soname, "reading models over HTTP", "libcurl4");
    if (!opened)
        return opened.error();
    void* library = *opened;
    CurlLibrary curl;
    curl_version_info_data* (*versionInfo)(CURLversion) = nullptr;
    SymbolBinder need(library);
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
    if (Status s = need.done(soname, "libcurl"); !s)
        return s.error();
    const curl_version_info_data* info = versionInfo(CURLVERSION_NOW);
    const unsigned version = info ? info->version_num : 0;
    if (version < kMinimumCurlVersion) {
        closeSharedLibrary(library);
        return Error::io(soname + " is libcurl " + versionText(version)
            + "; reading over HTTP needs " + versionText(kMinimumCurlVersion) + " or newer");
    }
    curl.version = versionText(version);
    if (const CURLcode code = curl.globalInit(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
        const std::string why = curl.easyStrerror(code);
        closeSharedLibrary(library);
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
