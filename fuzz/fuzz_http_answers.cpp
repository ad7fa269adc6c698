// Target "http_answers": what a web server, the Hub or a CDN says, as the transport parses it.
// The input is an HTTP answer: header lines (split at '\n') up to the first empty line not
// followed by another status line, then a body, read as a page of the Hub's tree listing. Every
// line goes through ResponseHead::addLine, as libcurl hands them over (a status line starts a new
// response); the value of each header field goes through every parser of a server's words:
// Content-Range, Retry-After (for several clocks and caps), a Location resolved against a base (and
// against the previous hop's result, as redirects are followed) and a Link header's next page. The
// first response is the file as opened (its size, ETag and Last-Modified), the last one the answer
// to reads of ranges of it (checkRangeResponse) and to the Hub's resolve (hubFileMetadata).
//
// What must hold: a Content-Range read is a range (first <= last < total); a Retry-After wait
// is within [0, cap] and a number of seconds is read exactly, clamped; an answer accepted for a
// range is a 206 of exactly that range of a file of that size with its validators; a resolved
// Location parses again as http(s) with a host and without user or password, and resolving it
// again (against itself, against the base, or an absolute one against another base) gives the
// same URL; displayUrl keeps no user, password, query or fragment; no message shows a secret of
// the URL a file was opened by; every refusal is an error with a message.
#include "fuzz_support.h"

#include "core/io/hub_api.h"
#include "core/remote/curl_library.h"
#include "core/remote/http_response.h"
#include "core/remote/http_transport.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace {

using namespace repack;
using fuzz::require;

// Header fields whose value goes through every parser: enough for any answer a test would
// write, few enough that a long input stays within libFuzzer's time limit.
constexpr size_t kMaxFieldsExamined = 64;

// The addresses a Location is resolved against: a Hub resolve (with a query), a loopback server
// on its own port, an IPv6 literal.
const std::string kHubBase = "https://huggingface.co/org/repo/resolve/main/dir/model.onnx?x=1";
const std::string kBases[] = {kHubBase, "http://127.0.0.1:8080/a/b/c", "http://[::1]:9000/d/"};
// What a file was opened by: no message may show its user, password or query.
const std::string kSecret = "s3cr3tQ7";
const std::string kFileUrl
    = "https://user:pw" + kSecret + "@cdn.example/org/model.onnx?X-Amz-Signature=" + kSecret;

// Whether libcurl's parser reads `url` with any of `parts`.
bool hasAnyOf(const std::string& url, std::initializer_list<CURLUPart> parts)
{
    const CurlLibrary& curl = **curlLibrary();
    CURLU* handle = curl.urlNew();
    require(handle != nullptr, "curl_url() failed");
    bool found = false;
    if (curl.urlSet(handle, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
        for (const CURLUPart part : parts) {
            char* text = nullptr;
            if (curl.urlGet(handle, part, &text, 0) == CURLUE_OK)
                found = true;
            curl.freeText(text);
        }
    }
    curl.urlCleanup(handle);
    return found;
}

void checkDisplayed(const std::string& url)
{
    const std::string shown = displayUrl(url);
    require(!shown.empty(), "displayUrl gives nothing");
    if (shown.front() != '(') // "(a URL that cannot be parsed)"
        require(!hasAnyOf(shown,
                    {CURLUPART_USER, CURLUPART_PASSWORD, CURLUPART_QUERY, CURLUPART_FRAGMENT}),
            "displayUrl keeps a user, password, query or fragment");
}

// `location` resolved against `base`: checked, and the result when it resolves.
std::optional<std::string> checkResolved(const std::string& base, const std::string& location)
{
    auto resolved = resolveLocation(base, location);
    if (!resolved) {
        require(!resolved.error().message.empty(), "a Location refused without a message");
        return std::nullopt;
    }
    const std::string& url = *resolved;
    const std::string origin = urlOrigin(url);
    require(!origin.empty(), "a resolved Location does not parse again: " + url);
    require(origin.starts_with("http://") || origin.starts_with("https://"),
        "a resolved Location is not http(s): " + url);
    require(!hasAnyOf(url, {CURLUPART_USER, CURLUPART_PASSWORD}),
        "a resolved Location keeps a user or password: " + url);
    auto again = resolveLocation(url, url);
    require(again.ok() && *again == url, "a resolved Location resolved against itself changes");
    auto fromBase = resolveLocation(base, url);
    require(fromBase.ok() && *fromBase == url, "resolving a resolved Location again changes it");
    if (isAbsoluteUrl(location)) {
        for (const std::string& other : kBases) {
            auto elsewhere = resolveLocation(other, location);
            require(elsewhere.ok() && *elsewhere == url,
                "an absolute Location resolves differently against another base");
        }
    }
    checkDisplayed(url);
    return url;
}

void checkContentRange(std::string_view text)
{
    const auto range = parseContentRange(text);
    if (!range)
        return;
    require(range->first <= range->last, "a Content-Range whose first byte is past its last");
    require(!range->total || range->last < *range->total, "a Content-Range past the file's end");
    // Written back in its canonical form, the same range.
    const std::string canonical = "bytes " + std::to_string(range->first) + "-"
        + std::to_string(range->last) + "/"
        + (range->total ? std::to_string(*range->total) : std::string("*"));
    const auto again = parseContentRange(canonical);
    require(again && again->first == range->first && again->last == range->last
            && again->total == range->total,
        "a Content-Range does not read back");
}

void checkRetryAfter(std::string_view value)
{
    using std::chrono::seconds;
    using std::chrono::system_clock;
    // The epoch, a recent day, year 2200 (the clock counts nanoseconds: it ends in 2262), so
    // that dates of the input lie far in the past and in the future.
    const system_clock::time_point nows[] = {system_clock::time_point{},
        system_clock::from_time_t(1717200000), system_clock::from_time_t(7258118400)};
    const seconds caps[] = {seconds(0), seconds(60), seconds(int64_t{100} * 366 * 86400)};
    const bool digits = !value.empty()
        && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    for (const auto now : nows) {
        for (const seconds cap : caps) {
            const auto wait = parseRetryAfter(value, now, cap);
            if (!wait) {
                require(!digits, "a Retry-After of seconds not read");
                continue;
            }
            require(wait->count() >= 0, "a negative Retry-After");
            require(*wait <= cap, "a Retry-After past its cap");
            if (!digits)
                continue;
            std::string_view number = value;
            while (number.size() > 1 && number.front() == '0')
                number.remove_prefix(1);
            if (number.size() <= 18) // below 10^18: fits int64 seconds
                require(wait->count()
                        == std::min<int64_t>(cap.count(), std::stoll(std::string(number))),
                    "a Retry-After of seconds read wrong");
            else
                require(*wait == cap, "a Retry-After of a huge number of seconds not capped");
        }
    }
}

// The file as a first response (a stat) describes it.
RemoteFile fileOf(const ResponseHead& head)
{
    RemoteFile file;
    file.url = kFileUrl;
    file.location = kFileUrl;
    file.etag = head.etag;
    file.lastModified = head.lastModified;
    const auto range = parseContentRange(head.contentRange);
    if (range && range->total)
        file.size = *range->total;
    else if (head.contentLength)
        file.size = *head.contentLength;
    return file;
}

void requireNoSecret(const std::string& message, bool inputHasSecret)
{
    require(!message.empty(), "a refusal without a message");
    require(inputHasSecret || message.find(kSecret) == std::string::npos,
        "a message shows a secret of the file's URL: " + message);
}

void checkRange(const ResponseHead& head, const RemoteFile& file, uint64_t offset, uint64_t length,
    bool inputHasSecret)
{
    // What read() asks: at least one byte, within the file.
    if (length == 0 || offset > file.size || length > file.size - offset)
        return;
    const Status status = checkRangeResponse(head, file, offset, length);
    if (!status) {
        require(status.error().is(ErrorKind::Changed) || status.error().is(ErrorKind::Corrupt),
            "a range refused as neither changed nor corrupt");
        requireNoSecret(status.error().message, inputHasSecret);
        return;
    }
    require(head.status == 206, "a range accepted from an answer other than 206");
    const auto range = parseContentRange(head.contentRange);
    require(range.has_value(), "a range accepted without a Content-Range");
    require(range->first == offset && range->last == offset + length - 1,
        "a range accepted that is not the one asked");
    require(!range->total || *range->total == file.size, "a range accepted of another size");
    require(!head.contentLength || *head.contentLength == length,
        "a range accepted with another Content-Length");
    require(file.etag.empty() || head.etag.empty() || head.etag == file.etag,
        "a range accepted with another ETag");
    require(!file.etag.empty() || file.lastModified.empty() || head.lastModified.empty()
            || head.lastModified == file.lastModified,
        "a range accepted with another Last-Modified");
}

void checkHubMetadata(const ResponseHead& head)
{
    // As the Hub client reads a resolve's answer: the first header of a name.
    RawHead raw;
    raw.status = head.status;
    raw.headers = head.fields;
    const auto header = [&raw](std::string_view name) { return raw.header(name); };
    const bool refused = head.status == 401 || head.status == 403 || head.status == 404
        || !header("X-Error-Code").value_or("").empty();
    for (const bool hadToken : {false, true}) {
        auto metadata = hubFileMetadata(int(head.status), header, "hf://org/repo/m.onnx", hadToken);
        if (!metadata) {
            require(!metadata.error().message.empty(), "a Hub answer refused without a message");
            require(!refused || metadata.error().is(ErrorKind::NotFound),
                "a Hub refusal (401, 403, 404, X-Error-Code) not said as not found");
            continue;
        }
        require(!refused, "a Hub refusal taken for a file's metadata");
        require(isCommit(metadata->commit), "Hub metadata without a commit");
        require(!metadata->etag.empty() && metadata->size.has_value(),
            "Hub metadata without a content tag or size");
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    // Loaded once, before the first input: its allocations are the process's, not a leak.
    const auto curl = curlLibrary();
    require(
        curl.ok(), "libcurl cannot be loaded: " + (curl ? std::string() : curl.error().message));
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const bool inputHasSecret = input.find(kSecret) != std::string_view::npos;

    // The head: lines up to the empty one that ends it, each handed over as libcurl hands it.
    std::optional<ResponseHead> first; // the first response, once a status line ended it
    ResponseHead head;
    size_t examined = 0;
    std::string hop = kHubBase; // where the last Location led, as redirects are followed
    size_t pos = 0;
    while (pos < input.size()) {
        const size_t newline = input.find('\n', pos);
        const size_t end = newline == std::string_view::npos ? input.size() : newline + 1;
        const std::string_view line = input.substr(pos, end - pos);
        pos = end;
        // An empty line ends the head, unless another response of the transfer follows (a
        // redirect's head, a 100 Continue: libcurl hands over every head's lines).
        if ((line == "\n" || line == "\r\n") && !input.substr(pos).starts_with("HTTP/"))
            break;
        // A status line starts a new response (addLine clears the head for it): the one before
        // it is complete.
        ResponseHead probe;
        probe.fields.emplace_back();
        probe.addLine(line);
        if (probe.fields.empty() && !first && (head.status != 0 || !head.fields.empty()))
            first = head;
        const size_t fields = head.fields.size();
        head.addLine(line);
        require(head.status >= 0 && head.status <= 999, "a status of more than three digits");
        if (head.fields.size() != fields + 1)
            continue;
        if (++examined > kMaxFieldsExamined)
            continue;
        const std::string value = head.fields.back().second;
        checkContentRange(value);
        checkRetryAfter(value);
        (void)isAbsoluteUrl(value);
        checkDisplayed(value);
        for (const std::string& base : kBases)
            checkResolved(base, value);
        if (sameHeaderName(head.fields.back().first, "location"))
            hop = checkResolved(hop, value).value_or(kHubBase);
        if (const auto next = nextPageLink(value)) {
            require(value.find("<" + *next + ">") != std::string::npos,
                "a next page that is not between < and > of the Link header");
            checkResolved(kHubBase, *next);
        }
    }

    // The first response opened the file, the last one answers reads of it.
    const RemoteFile opened = fileOf(first.value_or(head));
    const ResponseHead& answer = head;
    if (const auto range = parseContentRange(answer.contentRange))
        checkRange(answer, opened, range->first, range->last - range->first + 1, inputHasSecret);
    checkRange(answer, opened, 0, opened.size, inputHasSecret);
    checkRange(answer, opened, opened.size - 1, 1, inputHasSecret);
    const RemoteFile now = fileOf(answer);
    if (const Status same = checkSameFile(now, opened); same) {
        require(now.size == opened.size && now.etag.empty() == opened.etag.empty(),
            "another size or ETag taken for the same file");
        require(
            now.etag.empty() || now.etag == opened.etag, "another ETag taken for the same file");
    } else {
        require(same.error().is(ErrorKind::Changed), "another file not said as changed");
        requireNoSecret(same.error().message, inputHasSecret);
    }
    checkHubMetadata(answer);

    // The body: a page of the Hub's tree listing.
    const std::string_view body = input.substr(pos);
    if (auto entries = parseHubTree(body); !entries)
        require(!entries.error().message.empty(), "a listing refused without a message");
    return 0;
}
