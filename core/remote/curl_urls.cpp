#include "curl_urls.h"

#include <algorithm>
#include <cctype>

namespace repack {
namespace http {

UrlHandle parsedUrl(const CurlLibrary& curl, const std::string& url)
{
    UrlHandle handle(curl.urlNew(), curl.urlCleanup);
    if (handle && curl.urlSet(handle.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK)
        handle.reset();
    return handle;
}

std::string urlPart(const CurlLibrary& curl, CURLU* url, CURLUPart part, unsigned flags)
{
    char* text = nullptr;
    if (curl.urlGet(url, part, &text, flags) != CURLUE_OK || !text)
        return {};
    std::string result(text);
    curl.freeText(text);
    return result;
}

namespace {

std::string lowercase(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(),
        [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

// Scheme, host and port of a parsed URL, lowercase: a credential belongs to one.
std::string originOf(const CurlLibrary& curl, CURLU* url)
{
    const std::string host = urlPart(curl, url, CURLUPART_HOST);
    if (host.empty())
        return {};
    return lowercase(urlPart(curl, url, CURLUPART_SCHEME) + "://" + host + ":"
        + urlPart(curl, url, CURLUPART_PORT, CURLU_DEFAULT_PORT));
}

std::string originOf(const CurlLibrary& curl, const std::string& url)
{
    const UrlHandle handle = parsedUrl(curl, url);
    return handle ? originOf(curl, handle.get()) : std::string();
}

bool isWebScheme(const std::string& scheme)
{
    return scheme == "http" || scheme == "https";
}

} // namespace

std::string schemeOf(const std::string& url)
{
    const auto curl = curlLibrary();
    if (!curl)
        return {};
    const UrlHandle handle = parsedUrl(**curl, url);
    return handle ? lowercase(urlPart(**curl, handle.get(), CURLUPART_SCHEME)) : std::string();
}

Result<Target> targetOf(const CurlLibrary& curl, const HttpOptions& options, const std::string& url)
{
    const UrlHandle handle = parsedUrl(curl, url);
    if (!handle)
        return Error::io("the address cannot be parsed as a URL");
    const std::string origin = originOf(curl, handle.get());
    if (origin.empty() || !isWebScheme(lowercase(urlPart(curl, handle.get(), CURLUPART_SCHEME))))
        return Error::io("not an http or https address with a host");
    return Target{urlPart(curl, handle.get(), CURLUPART_URL),
        options.credential && !options.credential->origin.empty()
            && origin == options.credential->origin};
}

} // namespace http

using http::isWebScheme;
using http::lowercase;
using http::originOf;
using http::parsedUrl;
using http::UrlHandle;
using http::urlPart;

std::string urlOrigin(const std::string& url)
{
    const auto curl = curlLibrary();
    return curl ? originOf(**curl, url) : std::string();
}

bool isAbsoluteUrl(const std::string& text)
{
    const auto curl = curlLibrary();
    if (!curl)
        return false;
    UrlHandle handle((*curl)->urlNew(), (*curl)->urlCleanup);
    return handle
        && (*curl)->urlSet(handle.get(), CURLUPART_URL, text.c_str(), CURLU_NON_SUPPORT_SCHEME)
        == CURLUE_OK;
}

Result<std::string> resolveLocation(const std::string& base, const std::string& location)
{
    const auto curl = curlLibrary();
    if (!curl)
        return curl.error();
    UrlHandle handle = parsedUrl(**curl, base);
    if (!handle)
        return Error::io("the address redirected from cannot be parsed");
    // Set on the base, a relative reference is resolved against it; on failure the handle keeps
    // the base, which must never be taken for the target.
    if (const CURLUcode code = (*curl)->urlSet(handle.get(), CURLUPART_URL, location.c_str(), 0);
        code != CURLUE_OK)
        return Error::io("the server's Location cannot be parsed as a URL (libcurl URL error "
            + std::to_string(code) + ")");
    // A server hands no credentials through a Location.
    (*curl)->urlSet(handle.get(), CURLUPART_USER, nullptr, 0);
    (*curl)->urlSet(handle.get(), CURLUPART_PASSWORD, nullptr, 0);
    (*curl)->urlSet(handle.get(), CURLUPART_OPTIONS, nullptr, 0);
    // libcurl connects to its reading of the text, which can differ from the handle's (a host
    // of percent-encoded digits, "%31%32%37.1", becomes an IPv4 address only when read again):
    // the checks and the answer are of that reading.
    handle = parsedUrl(**curl, urlPart(**curl, handle.get(), CURLUPART_URL));
    if (!handle)
        return Error::io("the server's Location cannot be parsed as a URL once resolved");
    const std::string scheme = lowercase(urlPart(**curl, handle.get(), CURLUPART_SCHEME));
    if (!isWebScheme(scheme))
        return Error::io("the server redirects to a " + scheme
            + ": address; only http and https "
              "are followed");
    if (originOf(**curl, handle.get()).empty())
        return Error::io("the server redirects to an address without a host");
    return urlPart(**curl, handle.get(), CURLUPART_URL);
}

std::string displayUrl(const std::string& url)
{
    const auto curl = curlLibrary();
    if (!curl)
        return "(a URL: without libcurl it is not parsed, and not shown)";
    const UrlHandle handle = parsedUrl(**curl, url);
    if (!handle)
        return "(a URL that cannot be parsed)";
    for (const CURLUPart part : {CURLUPART_USER, CURLUPART_PASSWORD, CURLUPART_OPTIONS,
             CURLUPART_QUERY, CURLUPART_FRAGMENT})
        (*curl)->urlSet(handle.get(), part, nullptr, 0);
    return urlPart(**curl, handle.get(), CURLUPART_URL);
}

} // namespace repack
