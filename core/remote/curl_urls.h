// URLs as libcurl's own parser reads them: where a request goes, and whether the credential goes
// with it, are decided on the reading libcurl connects by.
#pragma once

#include "curl_library.h"
#include "http_transport.h"

#include <memory>
#include <string>

namespace repack::http {

// One CURLU of `url`, freed on scope exit; null when libcurl cannot parse it.
using UrlHandle = std::unique_ptr<CURLU, void (*)(CURLU*)>;
UrlHandle parsedUrl(const CurlLibrary& curl, const std::string& url);

std::string urlPart(const CurlLibrary& curl, CURLU* url, CURLUPart part, unsigned flags = 0);

// The scheme of `url` as libcurl's parser reads it, lowercase; "" when it cannot be parsed.
std::string schemeOf(const std::string& url);

// The URL `exchange` connects to, as libcurl's parser reads it, and whether the options'
// credential goes with it: only to the credential's own origin. The one place that decides.
struct Target {
    std::string url; // normalised: what libcurl is handed is what was checked
    bool withCredential = false;
};
Result<Target> targetOf(
    const CurlLibrary& curl, const HttpOptions& options, const std::string& url);

} // namespace repack::http
