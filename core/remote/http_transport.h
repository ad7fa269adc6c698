// Reading a file on a web server by HTTP range requests (libcurl; docs/remote-sources-design.md
// 3.2): its size and validator first (stat), then byte ranges checked against them, so a file
// replaced on the server is an ErrorKind::Changed error, never bytes of two versions.
// Synchronous and Qt-free; one curl handle per transport, used by one thread at a time.
#pragma once

#include "core/progress.h"
#include "core/result.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace repack {

// A secret that proves who the user is to one server: the Hub's token, S3's keys. It belongs to
// one origin (scheme, host and port, as urlOrigin says): the transport attaches it to a request
// only when the URL that request connects to, parsed by libcurl's own URL parser, has exactly
// that origin. Every redirect hop is such a request; a hop to any other origin, however the
// server spelled its Location, carries none. Callers never decide this: they register the
// credential with its origin, once.
struct Credential {
    std::string origin; // urlOrigin() of the endpoint it belongs to
    // Headers that carry it, e.g. "Authorization: Bearer ..."; never in a message.
    std::vector<std::string> headers;
    // S3's request signing (AWS Signature Version 4): libcurl signs each request it is set on
    // (CURLOPT_AWS_SIGV4 with the keys as user and password).
    struct AwsSigV4 {
        std::string provider; // "aws:amz:REGION:s3" (S3Settings::sigV4())
        std::string accessKey;
        std::string secretKey;
    };
    std::optional<AwsSigV4> awsSigV4;
};

struct HttpOptions {
    std::chrono::milliseconds connectTimeout{10000};
    // A transfer whose average rate stays under stallBytesPerSecond for stallTime is a stall
    // (libcurl's low-speed rule): a trickle of a few bytes now and then cannot keep it alive.
    // There is no limit on a whole transfer, which would cut off a large range on a slow link;
    // the command's deadline (CancelToken::setDeadline) bounds everything.
    long stallBytesPerSecond = 1024;
    std::chrono::seconds stallTime{30};
    // Transient failures (connection reset or refused, timeout, HTTP 408, 429, 500, 502, 503,
    // 504) are tried again up to maxAttempts in all for one request, each retry taken from the
    // command's budget (CancelToken::takeRetry), after backoffBase * 2^n (+-25 %, at most
    // backoffCap), or the server's Retry-After, at most retryAfterCap.
    int maxAttempts = 5;
    std::chrono::milliseconds backoffBase{500};
    std::chrono::milliseconds backoffCap{8000};
    std::chrono::milliseconds retryAfterCap{60000};
    int maxRedirects = 5;
    // A wait on the network longer than this is said to the command's token (waiting()).
    std::chrono::milliseconds sayWaitingAfter{3000};
    std::optional<Credential> credential;
    // What messages call the file, e.g. its s3:// name; its URL without secrets when empty.
    std::string name;
    // Added to the message of a 401 or 403 answer: what the user may check (the credentials).
    std::string refusedHint;
};

// The largest file a server may say it has: a size past this is a lie (or a file no command
// could read), refused before any offset is computed from it.
inline constexpr uint64_t kMaxRemoteFileBytes = uint64_t{1} << 50; // 1 PiB

// What a HEAD of the URL said: the file as it was when opened, which every read checks.
struct RemoteFile {
    std::string url; // as asked (may hold a token in its query: never printed)
    std::string location; // where the redirects ended: the URL the reads ask
    uint64_t size = 0;
    std::string etag; // as the server spelled it, quotes included; "" when none
    std::string lastModified; // "" when none
    std::string name; // what messages call it (HttpOptions::name), "" for displayUrl(url)
    std::string display() const; // name, else displayUrl(url)
    bool strongEtag() const { return !etag.empty() && etag.rfind("W/", 0) != 0; }
};

// A response as the server sent it, not followed: its status and headers.
struct RawHead {
    std::string url; // as asked
    long status = 0;
    std::vector<std::pair<std::string, std::string>> headers; // in order, names as sent
    // A 3xx's Location resolved against url by libcurl's URL parser (without user or
    // password); "" otherwise, and "" when the Location cannot be parsed or is not http(s).
    std::string redirect;
    std::optional<std::string> header(std::string_view name) const; // the first of a name, any case
};

// A response not followed, with its whole body (an error page's too).
struct RawResponse {
    RawHead head;
    std::string body;
};

// Scheme, host and port of `url` (the port always written), lowercase, as libcurl's URL parser
// reads it: a credential belongs to one. "" when it cannot be parsed (or libcurl cannot be
// loaded).
std::string urlOrigin(const std::string& url);

// Whether libcurl's URL parser reads `text` as a URL on its own, without a base: false for a
// reference relative to one ("/path", "//host/path", "name").
bool isAbsoluteUrl(const std::string& text);

// `location` (a Location header) resolved against `base` by libcurl's URL parser, the way
// libcurl would connect to it: absolute, without user or password. An error when it cannot be
// parsed or its scheme is not http or https.
Result<std::string> resolveLocation(const std::string& base, const std::string& location);

// `url` without what may be secret (user, password, query, fragment), for messages.
std::string displayUrl(const std::string& url);

class HttpTransport {
public:
    explicit HttpTransport(HttpOptions options = {});
    ~HttpTransport();
    HttpTransport(const HttpTransport&) = delete;
    HttpTransport& operator=(const HttpTransport&) = delete;

    // HEAD of `url`, following redirects: its size and validators. NotFound for 404/410. A
    // HEAD refused with 403 or 405 is asked again as a GET of one byte: a presigned URL is
    // signed for GET alone, and some servers allow no HEAD.
    Result<RemoteFile> stat(const std::string& url, const CancelToken* cancel = nullptr);

    // What stat says, by a GET of the file's first `length` (at least 1) bytes instead of a
    // HEAD, with those bytes (fewer when the file is shorter): one request fewer for a file read
    // from its start (a model's structure). A server that ignores ranges (200) or an empty file
    // (416) is asked by stat instead, and then `bytes` is empty.
    struct FirstBytes {
        RemoteFile file;
        std::vector<std::byte> bytes;
    };
    Result<FirstBytes> statReading(
        const std::string& url, uint64_t length, const CancelToken* cancel = nullptr);
    // HEAD of `url` without following a redirect (a 3xx is an answer, with its Location): what
    // the Hub's resolve call says (core/remote/hub_client.h). Transient failures are tried again;
    // any other status is an answer, not an error.
    Result<RawHead> head(const std::string& url, const CancelToken* cancel = nullptr);
    // GET of `url`, not followed, its body whatever the status (the Hub's folder listing): Io
    // when it is longer than `maxBytes`.
    Result<RawResponse> get(
        const std::string& url, uint64_t maxBytes, const CancelToken* cancel = nullptr);

    // Bytes [offset, offset + into.size()) of `file` into `into`, all of them or an error:
    // Corrupt when the range is past the file's end or the server answers another range,
    // Changed when the file is no longer the one stat saw, Io when the server cannot be read,
    // Cancelled when `cancel` asked to stop.
    Status read(const RemoteFile& file, uint64_t offset, std::span<std::byte> into,
        const CancelToken* cancel = nullptr);
    // The same, into bytes of their own.
    Result<std::vector<std::byte>> read(const RemoteFile& file, uint64_t offset, uint64_t length,
        const CancelToken* cancel = nullptr);
    // Whether `file` (a stat's, at its location) is still the version stat saw, asked of the
    // server by a HEAD with If-Match (its strong ETag), a GET of one byte when HEAD is refused
    // (403, 405): ok when it is; Changed when it is not (412, or another size or validators);
    // Io when the server cannot tell. What a save asks of every remote file before it commits.
    Status revalidate(const RemoteFile& file, const CancelToken* cancel = nullptr);
    // The status of the answer that failed the last read() when it brought no bytes to check
    // (a 4xx, 404 and 410 included; a 5xx no longer tried again), or revalidate(): 403 is what
    // a signed URL answers once it has expired. 0 when it succeeded or failed otherwise.
    long refusedBy() const { return m_refusedBy; }

private:
    // A GET of bytes [0, length) of `url` (what stat and statReading ask with GET): nullopt when
    // the answer gives no range (a 200 or a 416).
    Result<std::optional<FirstBytes>> getFirst(
        const std::string& url, uint64_t length, const CancelToken* cancel);

    HttpOptions m_options;
    // CURL*, one easy handle, reused so its connection is kept alive; null when libcurl cannot
    // be loaded (core/remote/curl_library.h), and then stat and read say why.
    void* m_curl = nullptr;
    long m_refusedBy = 0;
};

} // namespace repack
