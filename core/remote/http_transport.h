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

struct HttpOptions {
    std::chrono::milliseconds connectTimeout{10000};
    // A transfer slower than lowSpeedLimit bytes/s for lowSpeedTime is a timeout. There is no
    // limit on a whole transfer, which would cut off a large range on a slow link.
    long lowSpeedLimit = 1;
    std::chrono::seconds lowSpeedTime{30};
    // Transient failures (connection reset or refused, timeout, HTTP 408, 429, 500, 502, 503,
    // 504) are tried again up to maxAttempts in all, after backoffBase * 2^n (+-25 %, at most
    // backoffCap), or the server's Retry-After, at most retryAfterCap.
    int maxAttempts = 5;
    std::chrono::milliseconds backoffBase{500};
    std::chrono::milliseconds backoffCap{8000};
    std::chrono::milliseconds retryAfterCap{60000};
    int maxRedirects = 5;
    // Headers sent with every request to the URL's own origin (scheme, host and port), e.g.
    // "Authorization: Bearer ..."; never after a redirect to another origin, never in a message.
    std::vector<std::string> authHeaders;
    // S3's request signing (AWS Signature Version 4): libcurl signs every request to the URL's
    // own origin, HEAD and range GETs alike (CURLOPT_AWS_SIGV4 with the keys as user and
    // password); as authHeaders, never after a redirect to another origin, never in a message.
    struct AwsSigV4 {
        std::string provider; // "aws:amz:REGION:s3" (S3Settings::sigV4())
        std::string accessKey;
        std::string secretKey;
    };
    std::optional<AwsSigV4> awsSigV4;
    // What messages call the file, e.g. its s3:// name; its URL without secrets when empty.
    std::string name;
    // Added to the message of a 401 or 403 answer: what the user may check (the credentials).
    std::string refusedHint;
};

// What a HEAD of the URL said: the file as it was when opened, which every read checks.
struct RemoteFile {
    std::string url; // as asked (may hold a token in its query: never printed)
    std::string location; // where the redirects ended: the URL the reads ask
    bool authAtLocation = true; // location has the origin of url: auth headers are sent there
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
    std::string redirect; // a 3xx's Location made absolute against url; "" otherwise
    std::optional<std::string> header(std::string_view name) const; // the first of a name, any case
};

// A response not followed, with its whole body (an error page's too).
struct RawResponse {
    RawHead head;
    std::string body;
};

// Scheme, host and port of `url`, lowercase: two URLs of one origin share auth headers. ""
// when it cannot be parsed (or libcurl cannot be loaded).
std::string urlOrigin(const std::string& url);

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
    // The status of the answer that failed the last read() when it brought no bytes to check
    // (a 4xx, 404 and 410 included; a 5xx no longer tried again): 403 is what a signed URL
    // answers once it has expired. 0 when the read succeeded or failed otherwise.
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
