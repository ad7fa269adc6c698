#include "http_exchange.h"

#include "curl_urls.h"

#include <algorithm>

namespace repack::http {
namespace {

// Has libcurl sign the requests of `handle` with `keys` (it computes each request's signature).
CURLcode signRequests(const CurlLibrary& curl, CURL* handle, const Credential::AwsSigV4& keys)
{
#if LIBCURL_VERSION_NUM >= 0x074b00
    CURLcode code = curl.easySetopt(handle, CURLOPT_AWS_SIGV4, keys.provider.c_str());
    if (code == CURLE_OK)
        code = curl.easySetopt(handle, CURLOPT_USERNAME, keys.accessKey.c_str());
    if (code == CURLE_OK)
        code = curl.easySetopt(handle, CURLOPT_PASSWORD, keys.secretKey.c_str());
    return code;
#else
    (void)curl;
    (void)handle;
    (void)keys;
    return CURLE_NOT_BUILT_IN;
#endif
}

const char* const kUserAgent = "onnx-repack/" REPACK_VERSION;

} // namespace

void perform(const Easy& easy, const HttpOptions& options, Exchange& exchange)
{
    const CurlLibrary& curl = easy.curl;
    CURL* const handle = easy.handle;
    curl.easyReset(handle);
    exchange.carriedCredential = false;
    exchange.sent = false;
    const auto target = targetOf(curl, options, exchange.url);
    if (!target) {
        exchange.code = CURLE_URL_MALFORMAT;
        exchange.curlError = target.error().message;
        return;
    }
    char errorText[CURL_ERROR_SIZE] = {};
    curl_slist* headers = nullptr;
    if (target->withCredential)
        for (const std::string& header : options.credential->headers)
            headers = curl.slistAppend(headers, header.c_str());
    if (!exchange.condition.empty())
        headers = curl.slistAppend(headers, exchange.condition.c_str());
    std::string range;
    if (exchange.range)
        range
            = std::to_string(exchange.range->first) + "-" + std::to_string(exchange.range->second);

    if (target->withCredential && options.credential->awsSigV4) {
        exchange.code = signRequests(curl, handle, *options.credential->awsSigV4);
        if (exchange.code != CURLE_OK) {
            curl.slistFreeAll(headers);
            exchange.curlError = "libcurl " + curl.version
                + " cannot sign S3 requests (AWS Signature Version 4 needs libcurl 7.75 or later)";
            return;
        }
    }
    exchange.carriedCredential = target->withCredential;
    curl.easySetopt(handle, CURLOPT_URL, target->url.c_str());
#if LIBCURL_VERSION_NUM >= 0x075500
    curl.easySetopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl.easySetopt(handle, CURLOPT_PROTOCOLS, CURLPROTO_HTTP | CURLPROTO_HTTPS);
#endif
    curl.easySetopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl.easySetopt(handle, CURLOPT_FOLLOWLOCATION, 0L); // redirects are followed by hand
    curl.easySetopt(handle, CURLOPT_USERAGENT, kUserAgent);
    curl.easySetopt(handle, CURLOPT_NOBODY, exchange.head ? 1L : 0L);
    curl.easySetopt(handle, CURLOPT_RANGE, range.empty() ? nullptr : range.c_str());
    curl.easySetopt(handle, CURLOPT_HTTPHEADER, headers);
    curl.easySetopt(
        handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connectTimeout.count()));
    curl.easySetopt(handle, CURLOPT_LOW_SPEED_LIMIT, options.stallBytesPerSecond);
    curl.easySetopt(handle, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options.stallTime.count()));
    // Bodies come in pieces of up to 512 KiB, not libcurl's 16 KiB: a weight of megabytes is a
    // few calls of onBody, not hundreds (bench/remote_verify.sh).
    curl.easySetopt(handle, CURLOPT_BUFFERSIZE, 512L << 10);
    curl.easySetopt(handle, CURLOPT_ERRORBUFFER, errorText);
    curl.easySetopt(handle, CURLOPT_HEADERFUNCTION, &Exchange::onHeader);
    curl.easySetopt(handle, CURLOPT_HEADERDATA, &exchange);
    curl.easySetopt(handle, CURLOPT_WRITEFUNCTION, &Exchange::onBody);
    curl.easySetopt(handle, CURLOPT_WRITEDATA, &exchange);
    curl.easySetopt(handle, CURLOPT_NOPROGRESS, 0L);
    curl.easySetopt(handle, CURLOPT_XFERINFOFUNCTION, &Exchange::onProgress);
    curl.easySetopt(handle, CURLOPT_XFERINFODATA, &exchange);

    // The command's deadline ends the transfer itself, not the next progress call (which
    // libcurl makes about once a second while nothing arrives): a little after it, so that the
    // token says the deadline passed and the end is told as the deadline's, not as a stall.
    if (exchange.cancel && exchange.cancel->remaining() != CancelToken::Clock::duration::max())
        curl.easySetopt(handle, CURLOPT_TIMEOUT_MS,
            static_cast<long>(std::max<int64_t>(0,
                                  std::chrono::duration_cast<std::chrono::milliseconds>(
                                      exchange.cancel->remaining())
                                      .count())
                + 50));
    // What the file is called where it is read: its URL (which names the host), or its name
    // (an hf:// or s3:// one) after the host that serves it.
    if (options.name.empty()) {
        exchange.waitingFor = displayUrl(target->url);
    } else {
        const UrlHandle parsed = parsedUrl(curl, target->url);
        exchange.waitingFor
            = (parsed ? urlPart(curl, parsed.get(), CURLUPART_HOST) + ": " : "") + options.name;
    }
    exchange.sayWaitingAfter = options.sayWaitingAfter;
    exchange.lastMoved = std::chrono::steady_clock::now();
    exchange.lastNow = -1;
    exchange.code = curl.easyPerform(handle);
    curl.slistFreeAll(headers);
    curl.easySetopt(handle, CURLOPT_ERRORBUFFER, nullptr); // errorText ends here
    if (exchange.saidWaiting) {
        exchange.saidWaiting = false;
        exchange.cancel->waiting({});
    }
    exchange.curlError = errorText[0] ? errorText : curl.easyStrerror(exchange.code);
    if (exchange.code == CURLE_OK)
        exchange.check(); // a wanted head whose body was empty
    curl_off_t sentAt = 0;
    exchange.sent
        = curl.easyGetinfo(handle, CURLINFO_PRETRANSFER_TIME_T, &sentAt) == CURLE_OK && sentAt > 0;
}

} // namespace repack::http
