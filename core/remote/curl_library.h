// libcurl, loaded the first time something is read over HTTP: a command on local files never
// maps libcurl and the two dozen libraries it needs (TLS, Kerberos, LDAP, ...), which cost every
// process memory and start-up time (bench/README.md has the figures).
// The headers come from libcurl4-openssl-dev at build time; the library is the one the runtime
// linker finds as libcurl.so.4 (Debian's libcurl4).
#pragma once

#include "core/result.h"

#include <curl/curl.h>

#include <string>

namespace repack {

// The libcurl functions core/remote calls, with libcurl's own signatures.
struct CurlLibrary {
    std::string version; // as libcurl reports it, e.g. "7.88.1"
    CURLcode (*globalInit)(long flags) = nullptr;
    CURL* (*easyInit)() = nullptr;
    CURLcode (*easySetopt)(CURL* handle, CURLoption option, ...) = nullptr;
    CURLcode (*easyPerform)(CURL* handle) = nullptr;
    CURLcode (*easyGetinfo)(CURL* handle, CURLINFO info, ...) = nullptr;
    void (*easyReset)(CURL* handle) = nullptr;
    void (*easyCleanup)(CURL* handle) = nullptr;
    const char* (*easyStrerror)(CURLcode code) = nullptr;
    curl_slist* (*slistAppend)(curl_slist* list, const char* text) = nullptr;
    void (*slistFreeAll)(curl_slist* list) = nullptr;
    CURLU* (*urlNew)() = nullptr;
    void (*urlCleanup)(CURLU* url) = nullptr;
    CURLUcode (*urlSet)(CURLU* url, CURLUPart part, const char* text, unsigned flags) = nullptr;
    CURLUcode (*urlGet)(const CURLU* url, CURLUPart part, char** text, unsigned flags) = nullptr;
    void (*freeText)(void* text) = nullptr; // curl_free
};

// The oldest libcurl whose features core/remote uses: CURLOPT_PROTOCOLS_STR (7.85) where the
// headers have it, else CURLINFO_RETRY_AFTER (7.66).
#if LIBCURL_VERSION_NUM >= 0x075500
inline constexpr unsigned kMinimumCurlVersion = 0x075500;
#else
inline constexpr unsigned kMinimumCurlVersion = 0x074200;
#endif

// Loads `soname` with dlopen and looks up every function above, or says why it cannot (a missing
// library names the package to install; an older one its version). curl_global_init has run
// when it succeeds. The library stays loaded for the life of the process.
Result<CurlLibrary> loadCurlLibrary(const std::string& soname);

// libcurl.so.4, loaded once for the process; the same error on every call when it cannot be.
Result<const CurlLibrary*> curlLibrary();

} // namespace repack
