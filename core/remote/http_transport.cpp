#include "http_transport.h"
#include "curl_library.h"
#include "curl_urls.h"
#include "http_exchange.h"
#include "http_response.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <random>
#include <thread>

namespace repack {

namespace {

using http::Easy;
using http::Exchange;
using http::perform;
using http::schemeOf;

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

std::optional<std::string> RawHead::header(std::string_view name) const
{
    for (const auto& [key, value] : headers)
        if (sameHeaderName(key, name))
            return value;
    return std::nullopt;
}

std::string RemoteFile::display() const
{
    return name.empty() ? displayUrl(url) : name;
}

namespace {

// ": " + the options' hint after an answer that refused access (401, 403), else "".
std::string refusal(const HttpOptions& options, long status)
{
    if ((status != 401 && status != 403) || options.refusedHint.empty())
        return {};
    return ": " + options.refusedHint;
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
