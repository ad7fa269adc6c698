#include "http_transport.h"
#include "curl_library.h"
#include "http_response.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <thread>

namespace repack {

namespace {

// One CURLU of `url`, freed on scope exit; null when libcurl cannot parse it.
using UrlHandle = std::unique_ptr<CURLU, void (*)(CURLU*)>;
UrlHandle parsedUrl(const CurlLibrary& curl, const std::string& url)
{
    UrlHandle handle(curl.urlNew(), curl.urlCleanup);
    if (handle && curl.urlSet(handle.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK)
        handle.reset();
    return handle;
}

std::string urlPart(const CurlLibrary& curl, CURLU* url, CURLUPart part, unsigned flags = 0)
{
    char* text = nullptr;
    if (curl.urlGet(url, part, &text, flags) != CURLUE_OK || !text)
        return {};
    std::string result(text);
    curl.freeText(text);
    return result;
}

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

// The scheme of `url` as libcurl's parser reads it, lowercase; "" when it cannot be parsed.
std::string schemeOf(const std::string& url)
{
    const auto curl = curlLibrary();
    if (!curl)
        return {};
    const UrlHandle handle = parsedUrl(**curl, url);
    return handle ? lowercase(urlPart(**curl, handle.get(), CURLUPART_SCHEME)) : std::string();
}

bool isWebScheme(const std::string& scheme)
{
    return scheme == "http" || scheme == "https";
}

bool isRedirect(long status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

bool isTransientStatus(long status)
{
    return status == 408 || status == 429 || status == 500 || status == 502 || status == 503
        || status == 504;
}

bool isTransientCurlError(CURLcode code)
{
    switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SSL_CONNECT_ERROR:
        return true;
    default:
        return false;
    }
}

// Sleeps `wait`, waking early when `cancel` asks to stop; false when it did.
bool sleepUnlessCancelled(std::chrono::milliseconds wait, const CancelToken* cancel)
{
    const auto end = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < end) {
        if (cancel && cancel->isCancelled())
            return false;
        std::this_thread::sleep_for(
            std::min<std::chrono::milliseconds>(std::chrono::milliseconds(50),
                std::chrono::duration_cast<std::chrono::milliseconds>(
                    end - std::chrono::steady_clock::now())
                    + std::chrono::milliseconds(1)));
    }
    return !(cancel && cancel->isCancelled());
}

std::string statusText(long status)
{
    return "HTTP " + std::to_string(status);
}

// [offset, offset + length) outside a file of file.size bytes: the error that says so.
std::optional<Error> pastTheEnd(const RemoteFile& file, uint64_t offset, uint64_t length)
{
    if (offset <= file.size && length <= file.size - offset)
        return std::nullopt;
    return Error::corrupt(file.display() + ": bytes " + std::to_string(offset) + "-"
        + std::to_string(offset + length - 1) + " are past the end of the file ("
        + std::to_string(file.size) + " bytes)");
}

} // namespace

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

std::optional<std::string> RawHead::header(std::string_view name) const
{
    for (const auto& [key, value] : headers)
        if (sameHeaderName(key, name))
            return value;
    return std::nullopt;
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

std::string RemoteFile::display() const
{
    return name.empty() ? displayUrl(url) : name;
}

namespace {

// One request and what came back. The body goes to `body` when the head says it may (`accept`),
// else it is discarded (an error page) or the transfer stops (a check failed).
struct Exchange {
    std::string url;
    bool head = false; // HEAD, else GET
    bool followRedirects = true; // else a 3xx is the answer
    std::optional<std::pair<uint64_t, uint64_t>> range; // first, last (inclusive)
    std::string condition; // "If-Match: ..." or "If-Range: ..."
    std::function<Status(const ResponseHead&)> accept; // for a 2xx body
    std::span<std::byte> body;
    std::string* text = nullptr; // else a body of any length up to textLimit goes here
    uint64_t textLimit = 0;

    ResponseHead response;
    bool checked = false;
    std::optional<Error> refused; // accept's verdict, or a body longer than asked
    uint64_t received = 0;
    bool carriedCredential = false; // the transport attached the credential to this request
    bool sent = false; // the request went out (a timeout after it is a stall)
    const CancelToken* cancel = nullptr;
    CURLcode code = CURLE_OK;
    std::string curlError;

    // Saying what the request waits for (CancelToken::waiting) once it waits long.
    std::string waitingFor; // "HOST: what"
    std::chrono::milliseconds sayWaitingAfter{0};
    std::string attemptText; // "attempt 2 of 5"
    std::chrono::steady_clock::time_point lastMoved;
    curl_off_t lastNow = -1;
    bool saidWaiting = false;

    static size_t onHeader(char* data, size_t size, size_t count, void* self)
    {
        static_cast<Exchange*>(self)->response.addLine(std::string_view(data, size * count));
        return size * count;
    }

    static size_t onBody(char* data, size_t size, size_t count, void* self)
    {
        return static_cast<Exchange*>(self)->take(data, size * count);
    }

    static int onProgress(void* self, curl_off_t, curl_off_t now, curl_off_t, curl_off_t)
    {
        return static_cast<Exchange*>(self)->progressed(now) ? 0 : 1;
    }

    // False when the transfer should stop (the command was cancelled or is past its deadline).
    bool progressed(curl_off_t now)
    {
        if (cancel && cancel->isCancelled())
            return false;
        const auto clock = std::chrono::steady_clock::now();
        if (now != lastNow) {
            lastNow = now;
            lastMoved = clock;
            if (saidWaiting) {
                saidWaiting = false;
                cancel->waiting({});
            }
        } else if (cancel && !saidWaiting && clock - lastMoved >= sayWaitingAfter) {
            saidWaiting = true;
            cancel->waiting(waitingFor + ", " + attemptText + ": no answer for "
                + std::to_string(
                    std::chrono::duration_cast<std::chrono::seconds>(clock - lastMoved).count())
                + " s");
        }
        return true;
    }

    bool bodyWanted() const { return response.status / 100 == 2; }

    // Checks the head before the first byte of a wanted body; false when it is refused.
    bool check()
    {
        if (!checked && bodyWanted() && accept) {
            checked = true;
            if (Status status = accept(response); !status)
                refused = status.error();
        }
        return !refused;
    }

    size_t take(const char* data, size_t size)
    {
        if (!check())
            return 0; // stops the transfer: the rest of a refused body is never read
        if (!bodyWanted() && !text)
            return size;
        if (text) {
            if (size > textLimit - text->size()) {
                refused = Error::io(displayUrl(url) + ": the answer is longer than "
                    + std::to_string(textLimit) + " bytes");
                return 0;
            }
            text->append(data, size);
            return size;
        }
        if (size > body.size() - received) {
            refused = Error::corrupt(displayUrl(url) + ": the server sent more than the "
                + std::to_string(body.size()) + " bytes asked");
            return 0;
        }
        std::memcpy(body.data() + received, data, size);
        received += size;
        return size;
    }
};

// One easy handle and the library it came from.
struct Easy {
    const CurlLibrary& curl;
    CURL* handle;
};

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

// ": " + the options' hint after an answer that refused access (401, 403), else "".
std::string refusal(const HttpOptions& options, long status)
{
    if ((status != 401 && status != 403) || options.refusedHint.empty())
        return {};
    return ": " + options.refusedHint;
}

// The URL `exchange` connects to, as libcurl's parser reads it, and whether the options'
// credential goes with it: only to the credential's own origin. The one place that decides.
struct Target {
    std::string url; // normalised: what libcurl is handed is what was checked
    bool withCredential = false;
};
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

const char* const kUserAgent = "onnx-repack/" REPACK_VERSION;

// Runs `exchange` once on `easy`, set up from scratch (the connection stays alive).
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

// A failure libcurl reports that a later attempt may not meet.
bool isTransient(const Exchange& exchange)
{
    if (exchange.code == CURLE_OK)
        return isTransientStatus(exchange.response.status);
    // A request that went out and then timed out is a stall: the server (a trickle, a hang)
    // answers no faster when asked again, so it is final.
    if (exchange.code == CURLE_OPERATION_TIMEDOUT && exchange.sent)
        return false;
    return isTransientCurlError(exchange.code);
}

// Why `exchange` failed, in words.
std::string failureOf(const Exchange& exchange, const HttpOptions& options)
{
    if (exchange.code == CURLE_OK)
        return statusText(exchange.response.status);
    if (exchange.code == CURLE_OPERATION_TIMEDOUT && exchange.sent)
        return "the server stalled: under " + std::to_string(options.stallBytesPerSecond)
            + " bytes/s for " + std::to_string(options.stallTime.count()) + " s ("
            + exchange.curlError + ")";
    return exchange.curlError;
}

// How long to wait before attempt `attempt` + 1: the server's Retry-After (clamped before any
// conversion), else the backoff with jitter.
std::chrono::milliseconds waitBefore(
    const Exchange& exchange, const HttpOptions& options, int attempt, std::mt19937& jitter)
{
    if (exchange.code == CURLE_OK) {
        for (const auto& [name, value] : exchange.response.fields) {
            if (!sameHeaderName(name, "retry-after"))
                continue;
            const auto asked = parseRetryAfter(
                value, std::chrono::system_clock::now(), std::chrono::seconds(60));
            if (asked && asked->count() > 0)
                return std::min<std::chrono::milliseconds>(*asked, options.retryAfterCap);
            break;
        }
    }
    const std::chrono::milliseconds wait = std::min<std::chrono::milliseconds>(
        options.backoffCap, options.backoffBase * (1LL << std::min(attempt - 1, 20)));
    return std::chrono::milliseconds(static_cast<long long>(
        wait.count() * std::uniform_real_distribution<double>(0.75, 1.25)(jitter)));
}

// The next hop of a redirected `exchange`: where its Location leads, parsed as libcurl would,
// or why it is not followed.
Result<std::string> nextHop(const Exchange& exchange, const std::string& what)
{
    std::string location;
    for (const auto& [name, value] : exchange.response.fields)
        if (sameHeaderName(name, "location"))
            location = value;
    auto next = resolveLocation(exchange.url, location);
    if (!next)
        return next.error().prefixed(what + ": ");
    // A request that carried a credential is never sent on in the clear.
    if (exchange.carriedCredential && schemeOf(exchange.url) == "https"
        && schemeOf(*next) == "http")
        return Error::io(what
            + ": the server redirects a request that carries credentials from "
              "https to http; refused");
    return next;
}

bool hasLocation(const ResponseHead& response)
{
    return std::any_of(response.fields.begin(), response.fields.end(),
        [](const auto& field) { return sameHeaderName(field.first, "location"); });
}

// Sets up `exchange` by `setupAttempt`, performs it, follows redirects and tries transient
// failures again: success leaves the last answer in `exchange`, else the error that ended it.
// Each retry is taken from the command's budget (the token's): progress never refills it.
template <typename Setup>
Status run(const Easy& easy, const HttpOptions& options, Exchange& exchange,
    const std::string& what, const CancelToken* cancel, Setup&& setupAttempt)
{
    std::mt19937 jitter(std::random_device{}());
    int redirects = 0;
    for (int attempt = 1;; ++attempt) {
        setupAttempt(exchange);
        exchange.cancel = cancel;
        exchange.attemptText
            = "attempt " + std::to_string(attempt) + " of " + std::to_string(options.maxAttempts);
        perform(easy, options, exchange);
        if (exchange.refused)
            return *exchange.refused;
        if (exchange.code == CURLE_ABORTED_BY_CALLBACK || (cancel && cancel->isCancelled()))
            return cancelled("reading " + what);
        if (exchange.code == CURLE_URL_MALFORMAT)
            return Error::io(what + ": " + exchange.curlError);
        const long status = exchange.response.status;
        if (exchange.code == CURLE_OK && isRedirect(status) && exchange.followRedirects
            && hasLocation(exchange.response)) {
            auto next = nextHop(exchange, what);
            if (!next)
                return next.error();
            if (++redirects > options.maxRedirects)
                return Error::io(
                    what + ": more than " + std::to_string(options.maxRedirects) + " redirects");
            exchange.url = std::move(*next);
            --attempt;
            continue;
        }
        if (cancel && exchange.received > 0)
            cancel->received(exchange.received);
        const bool transient = isTransient(exchange);
        if (exchange.code == CURLE_OK && !transient)
            return {};
        const std::string failure = failureOf(exchange, options);
        const std::string tries
            = attempt > 1 ? " (after " + std::to_string(attempt) + " attempts)" : "";
        if (!transient || attempt >= options.maxAttempts)
            return Error::io(what + ": " + failure + tries);
        if (!takeRetry(cancel))
            return Error::io(
                what + ": " + failure + tries + "; the command has used all its retries");
        const std::chrono::milliseconds wait = waitBefore(exchange, options, attempt, jitter);
        if (cancel)
            cancel->waiting(exchange.waitingFor + ", attempt " + std::to_string(attempt + 1)
                + " of " + std::to_string(options.maxAttempts) + " in "
                + std::to_string((wait.count() + 999) / 1000) + " s (" + failure + ")");
        const bool slept = sleepUnlessCancelled(wait, cancel);
        if (cancel)
            cancel->waiting({});
        if (!slept)
            return cancelled("reading " + what);
    }
}

// The transport's handle with its library, or why there is none (libcurl not loadable).
Result<Easy> easyOf(void* handle)
{
    const auto curl = curlLibrary();
    if (!curl)
        return curl.error();
    if (!handle)
        return Error::io("libcurl " + (*curl)->version + " could not make a connection handle");
    return Easy{**curl, static_cast<CURL*>(handle)};
}

} // namespace

HttpTransport::HttpTransport(HttpOptions options)
    : m_options(std::move(options))
{
    if (const auto curl = curlLibrary())
        m_curl = (*curl)->easyInit();
}

HttpTransport::~HttpTransport()
{
    if (m_curl)
        (*curlLibrary())->easyCleanup(static_cast<CURL*>(m_curl));
}

namespace {

// The file `exchange` (a HEAD or a GET of it) found, `size` bytes.
RemoteFile fileOf(
    const Exchange& exchange, const std::string& url, const HttpOptions& options, uint64_t size)
{
    RemoteFile file;
    file.url = url;
    file.name = options.name;
    file.location = exchange.url;
    file.size = size;
    file.etag = exchange.response.etag;
    file.lastModified = exchange.response.lastModified;
    return file;
}

// A size a server says a file has that no command could read: an error, before any offset is
// computed from it.
std::optional<Error> implausibleSize(const std::string& what, uint64_t size)
{
    if (size <= kMaxRemoteFileBytes)
        return std::nullopt;
    return Error::corrupt(what + ": the server says the file has " + std::to_string(size)
        + " bytes, more than any file this tool reads (" + std::to_string(kMaxRemoteFileBytes)
        + ")");
}

// A validator the reads would send back (If-Match, If-Range) holding a control character: a
// server could inject header lines into the requests that follow (libcurl sends a header's text
// as given), so such an answer is refused.
std::optional<Error> unsafeValidators(const std::string& what, const ResponseHead& head)
{
    for (const std::string* value : {&head.etag, &head.lastModified})
        if (std::any_of(value->begin(), value->end(),
                [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
            return Error::corrupt(what
                + ": the server's ETag or Last-Modified holds control "
                  "characters");
    return std::nullopt;
}

// Why an answer of `status` to the stat of `what` (by `method`) is no file: NotFound for 404 and
// 410, else Io.
Error notAFile(
    const std::string& what, long status, std::string_view method, const HttpOptions& options)
{
    if (status == 404 || status == 410)
        return Error::notFound(what + ": not on the server (" + statusText(status) + ")");
    return Error::io(
        what + ": " + statusText(status) + " to " + std::string(method) + refusal(options, status));
}

} // namespace

Result<RemoteFile> HttpTransport::stat(const std::string& url, const CancelToken* cancel)
{
    const auto easy = easyOf(m_curl);
    if (!easy)
        return easy.error();
    const std::string what = m_options.name.empty() ? displayUrl(url) : m_options.name;
    Exchange exchange;
    exchange.url = url;
    if (Status done
        = run(*easy, m_options, exchange, what, cancel, [](Exchange& e) { e.head = true; });
        !done)
        return done.error();
    const ResponseHead& head = exchange.response;
    if (head.status == 403 || head.status == 405) {
        auto first = getFirst(url, 1, cancel);
        if (!first)
            return first.error();
        if (!*first)
            return Error::io(what + ": " + statusText(head.status)
                + " to HEAD, and a GET of its first byte is not answered with a range");
        return std::move((*first)->file);
    }
    if (head.status != 200)
        return notAFile(what, head.status, "HEAD", m_options);
    if (!head.contentLength)
        return Error::io(what + ": the server does not say the file's size (no Content-Length)");
    if (auto error = implausibleSize(what, *head.contentLength))
        return *error;
    if (auto error = unsafeValidators(what, head))
        return *error;
    return fileOf(exchange, url, m_options, *head.contentLength);
}

Result<HttpTransport::FirstBytes> HttpTransport::statReading(
    const std::string& url, uint64_t length, const CancelToken* cancel)
{
    auto first = getFirst(url, std::max<uint64_t>(length, 1), cancel);
    if (!first)
        return first.error();
    if (*first)
        return std::move(**first);
    auto file = stat(url, cancel);
    if (!file)
        return file.error();
    return FirstBytes{std::move(*file), {}};
}

Result<std::optional<HttpTransport::FirstBytes>> HttpTransport::getFirst(
    const std::string& url, uint64_t length, const CancelToken* cancel)
{
    const auto easy = easyOf(m_curl);
    if (!easy)
        return easy.error();
    const std::string what = m_options.name.empty() ? displayUrl(url) : m_options.name;
    std::vector<std::byte> bytes(length);
    std::optional<ContentRange> range;
    // A 200 (the body is the whole file, which is not read), or a range of a file whose size
    // the server does not say ("bytes 0-99/*"): stat says what the file is instead.
    bool noRange = false;
    Exchange exchange;
    exchange.url = url;
    auto setup = [&](Exchange& e) {
        e.received = 0;
        e.checked = false;
        e.body = bytes;
        e.range = std::make_pair(uint64_t{0}, length - 1);
        e.accept = [&](const ResponseHead& head) -> Status {
            if (head.status == 200) {
                noRange = true;
                return Error::corrupt(what + ": no range"); // stops the transfer; not reported
            }
            range = parseContentRange(head.contentRange);
            if (head.status == 206 && range && !range->total) {
                noRange = true;
                return Error::corrupt(what + ": no size"); // stops the transfer; not reported
            }
            if (head.status != 206 || !range || range->first != 0
                || range->last + 1 != std::min(length, *range->total))
                return Error::corrupt(what + ": the server answered HTTP "
                    + std::to_string(head.status) + " " + head.contentRange
                    + " to a request of bytes 0-" + std::to_string(length - 1));
            return {};
        };
    };
    Status done = run(*easy, m_options, exchange, what, cancel, setup);
    if (noRange || (done && exchange.response.status == 416))
        return std::optional<FirstBytes>();
    if (!done)
        return done.error();
    const long status = exchange.response.status;
    if (status != 206)
        return notAFile(what, status, "GET", m_options);
    if (exchange.received != range->last + 1)
        return Error::io(what + ": the server sent " + std::to_string(exchange.received)
            + " of the " + std::to_string(range->last + 1) + " bytes asked");
    if (auto error = implausibleSize(what, *range->total))
        return *error;
    if (auto error = unsafeValidators(what, exchange.response))
        return *error;
    bytes.resize(exchange.received);
    return std::optional<FirstBytes>(
        FirstBytes{fileOf(exchange, url, m_options, *range->total), std::move(bytes)});
}

namespace {

// One request of `url` not followed: its head, and its body into `text` when given (at most
// `limit` bytes, whatever the status). HEAD without `text`, else GET.
Result<RawHead> askUnfollowed(void* handle, const HttpOptions& options, const std::string& url,
    std::string* text, uint64_t limit, const CancelToken* cancel)
{
    const auto easy = easyOf(handle);
    if (!easy)
        return easy.error();
    Exchange exchange;
    exchange.url = url;
    exchange.followRedirects = false;
    exchange.text = text;
    exchange.textLimit = limit;
    if (Status done = run(*easy, options, exchange, displayUrl(url), cancel,
            [text](Exchange& e) {
                e.head = !text;
                if (text)
                    text->clear(); // what an attempt tried again had received
            });
        !done)
        return done.error();
    RawHead head;
    head.url = url;
    head.status = exchange.response.status;
    if (isRedirect(head.status) && hasLocation(exchange.response)) {
        auto next = nextHop(exchange, displayUrl(url));
        if (!next)
            return next.error();
        head.redirect = std::move(*next);
    }
    head.headers = std::move(exchange.response.fields);
    return head;
}

} // namespace

Result<RawHead> HttpTransport::head(const std::string& url, const CancelToken* cancel)
{
    return askUnfollowed(m_curl, m_options, url, nullptr, 0, cancel);
}

Result<RawResponse> HttpTransport::get(
    const std::string& url, uint64_t maxBytes, const CancelToken* cancel)
{
    RawResponse response;
    auto head = askUnfollowed(m_curl, m_options, url, &response.body, maxBytes, cancel);
    if (!head)
        return head.error();
    response.head = std::move(*head);
    return response;
}

Status HttpTransport::read(
    const RemoteFile& file, uint64_t offset, std::span<std::byte> into, const CancelToken* cancel)
{
    m_refusedBy = 0;
    const uint64_t length = into.size();
    const std::string what = file.display();
    if (auto error = pastTheEnd(file, offset, length))
        return *error;
    if (length == 0)
        return {};
    const auto easy = easyOf(m_curl);
    if (!easy)
        return easy.error();
    Exchange exchange;
    exchange.url = file.location;
    uint64_t done = 0; // bytes of earlier attempts: a retry asks only for the rest
    auto setup = [&](Exchange& e) {
        done += e.received;
        const uint64_t first = offset + done;
        e.received = 0;
        e.checked = false;
        e.body = into.subspan(done);
        e.range = std::make_pair(first, offset + length - 1);
        e.condition = file.strongEtag()  ? "If-Match: " + file.etag
            : !file.lastModified.empty() ? "If-Range: " + file.lastModified
                                         : std::string();
        e.accept = [&file, first, rest = length - done](const ResponseHead& head) {
            return checkRangeResponse(head, file, first, rest);
        };
    };
    for (int answer = 1;; ++answer) {
        if (Status done = run(*easy, m_options, exchange, what, cancel, setup); !done)
            return done;
        const long status = exchange.response.status;
        if (status == 404 || status == 410) {
            m_refusedBy = status;
            return Error::changed(
                what + ": no longer on the server (" + statusText(status) + "); open it again");
        }
        if (status == 412 || status == 416)
            return checkRangeResponse(exchange.response, file, offset + done, length - done);
        if (!exchange.checked) { // an answer with no body to check (a 4xx)
            m_refusedBy = status;
            return Error::io(what + ": " + statusText(status) + " to a request of bytes "
                + std::to_string(offset + done) + "-" + std::to_string(offset + length - 1)
                + refusal(m_options, status));
        }
        if (done + exchange.received == length)
            return {};
        // A body without a length that ended early (with one, libcurl would have said "partial
        // file", a transient failure run() tries again): ask for the rest, as often as that.
        if (exchange.received == 0 || answer >= m_options.maxAttempts || !takeRetry(cancel))
            return Error::io(what + ": the server sent " + std::to_string(done + exchange.received)
                + " of the " + std::to_string(length) + " bytes asked");
    }
}

Result<std::vector<std::byte>> HttpTransport::read(
    const RemoteFile& file, uint64_t offset, uint64_t length, const CancelToken* cancel)
{
    m_refusedBy = 0;
    if (auto error = pastTheEnd(file, offset, length))
        return *error;
    std::vector<std::byte> bytes(length);
    if (Status status = read(file, offset, bytes, cancel); !status)
        return status.error();
    return bytes;
}

Status HttpTransport::revalidate(const RemoteFile& file, const CancelToken* cancel)
{
    m_refusedBy = 0;
    const auto easy = easyOf(m_curl);
    if (!easy)
        return easy.error();
    Exchange exchange;
    exchange.url = file.location;
    if (Status done = run(*easy, m_options, exchange, file.display(), cancel,
            [&file](Exchange& e) {
                e.head = true;
                e.condition = file.strongEtag() ? "If-Match: " + file.etag : std::string();
            });
        !done)
        return done;
    const ResponseHead& head = exchange.response;
    if (head.status == 200 && head.contentLength && (file.etag.empty() || !head.etag.empty()))
        return checkSameFile(fileOf(exchange, file.url, m_options, *head.contentLength), file);
    if (head.status == 412) // If-Match refused: what it says to a read
        return checkRangeResponse(head, file, 0, 1);
    if (file.size == 0) // no byte to ask for
        return Error::io(file.display() + ": " + statusText(head.status) + " to HEAD"
            + refusal(m_options, head.status));
    // HEAD refused (403, 405: an address signed for GET alone), the file gone (404, 410), or a
    // HEAD that does not say what the file was opened with (its size, its ETag): a GET of its
    // first byte, with If-Match and checked as every read is.
    std::byte first{};
    return read(file, 0, std::span<std::byte>(&first, 1), cancel);
}

} // namespace repack
