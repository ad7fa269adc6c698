#include "http_response.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>

#include <locale.h>
#include <time.h>

namespace repack {

namespace {

std::string_view trimmed(std::string_view text)
{
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    return text;
}

std::optional<uint64_t> number(std::string_view text)
{
    uint64_t value = 0;
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front())))
        return std::nullopt;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

std::string bytesText(uint64_t first, uint64_t last)
{
    return "bytes " + std::to_string(first) + "-" + std::to_string(last);
}

// The validators the server sends now (`etag`, `lastModified`) against the opened file's: ""
// when they agree, else what differs.
std::string validatorChange(
    const std::string& etag, const std::string& lastModified, const RemoteFile& file)
{
    if (!file.etag.empty() && !etag.empty() && etag != file.etag)
        return "ETag " + file.etag + " -> " + etag;
    if (file.etag.empty() && !file.lastModified.empty() && !lastModified.empty()
        && lastModified != file.lastModified)
        return "Last-Modified " + file.lastModified + " -> " + lastModified;
    return {};
}

Error changed(const RemoteFile& file, const std::string& how)
{
    return Error::changed(file.display() + ": changed on the server since it was opened (" + how
        + "); open it again");
}

} // namespace

bool sameHeaderName(std::string_view a, std::string_view b)
{
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x))
            == std::tolower(static_cast<unsigned char>(y));
    });
}

void ResponseHead::addLine(std::string_view line)
{
    line = trimmed(line);
    if (line.starts_with("HTTP/")) {
        *this = {};
        const size_t space = line.find(' ');
        if (space != std::string_view::npos)
            status = static_cast<long>(number(line.substr(space + 1, 3)).value_or(0));
        return;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos)
        return;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = trimmed(line.substr(colon + 1));
    fields.emplace_back(std::string(name), std::string(value));
    if (sameHeaderName(name, "content-range"))
        contentRange = value;
    else if (sameHeaderName(name, "content-length"))
        contentLength = number(value);
    else if (sameHeaderName(name, "etag"))
        etag = value;
    else if (sameHeaderName(name, "last-modified"))
        lastModified = value;
}

std::optional<ContentRange> parseContentRange(std::string_view text)
{
    if (!text.starts_with("bytes "))
        return std::nullopt;
    text.remove_prefix(6);
    const size_t dash = text.find('-');
    const size_t slash = text.find('/');
    if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash)
        return std::nullopt;
    const auto first = number(text.substr(0, dash));
    const auto last = number(text.substr(dash + 1, slash - dash - 1));
    if (!first || !last || *first > *last)
        return std::nullopt;
    if (text.substr(slash + 1) == "*")
        return ContentRange{*first, *last, std::nullopt};
    const auto total = number(text.substr(slash + 1));
    if (!total || *last >= *total)
        return std::nullopt;
    return ContentRange{*first, *last, *total};
}

std::optional<std::chrono::seconds> parseRetryAfter(
    std::string_view value, std::chrono::system_clock::time_point now, std::chrono::seconds cap)
{
    value = trimmed(value);
    if (!value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        })) {
        // Any number of digits, compared with the cap before it becomes a duration: one past
        // 64 bits is past any cap.
        const auto seconds = number(value);
        if (!seconds || *seconds > static_cast<uint64_t>(cap.count()))
            return cap;
        return std::chrono::seconds(static_cast<int64_t>(*seconds));
    }
    // IMF-fixdate, the obsolete RFC 850 form and asctime's (RFC 9110 5.6.7), always GMT, with
    // English names whatever the process's locale (the desktop app sets the user's).
    static const locale_t english = newlocale(LC_ALL_MASK, "C", nullptr);
    const std::string text(value);
    for (const char* format :
        {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y"}) {
        std::tm when{};
        const char* end = strptime_l(text.c_str(), format, &when, english);
        if (!end || *end != '\0')
            continue;
        const time_t at = timegm(&when);
        if (at == static_cast<time_t>(-1))
            return std::nullopt;
        // In whole seconds: a date centuries on does not fit the clock's nanoseconds.
        const int64_t delay = static_cast<int64_t>(at)
            - static_cast<int64_t>(std::chrono::system_clock::to_time_t(now));
        return std::chrono::seconds(std::clamp<int64_t>(delay, 0, cap.count()));
    }
    return std::nullopt;
}

Status checkRangeResponse(
    const ResponseHead& head, const RemoteFile& file, uint64_t offset, uint64_t length)
{
    const std::string asked = bytesText(offset, offset + length - 1);
    const std::string where = file.display() + ": ";
    if (head.status == 412)
        return changed(file, "the server no longer has ETag " + file.etag);
    if (head.status == 416)
        return Error::corrupt(where + "the file is shorter than the " + std::to_string(file.size)
            + " bytes the server said it has (HTTP 416 to a request of " + asked + ")");
    if (const std::string how = validatorChange(head.etag, head.lastModified, file); !how.empty())
        return changed(file, how);
    if (head.status == 200)
        return Error::corrupt(
            where + "the server ignores range requests (HTTP 200 to " + asked + " instead of 206)");
    if (head.status != 206)
        return Error::corrupt(
            where + "HTTP " + std::to_string(head.status) + " to a request of " + asked);
    const auto range = parseContentRange(head.contentRange);
    if (!range)
        return Error::corrupt(where + "the server's Content-Range \"" + head.contentRange
            + "\" is not \"bytes FIRST-LAST/SIZE\" (asked " + asked + ")");
    if (range->total && *range->total != file.size)
        return changed(
            file, "size " + std::to_string(file.size) + " -> " + std::to_string(*range->total));
    if (range->first != offset || range->last != offset + length - 1)
        return Error::corrupt(
            where + "the server answered " + head.contentRange + " to a request of " + asked);
    if (head.contentLength && *head.contentLength != length)
        return Error::corrupt(where + "the server's Content-Length "
            + std::to_string(*head.contentLength) + " is not the " + std::to_string(length)
            + " bytes of " + asked);
    return {};
}

Status checkSameFile(const RemoteFile& now, const RemoteFile& opened)
{
    if (now.size != opened.size)
        return changed(
            opened, "size " + std::to_string(opened.size) + " -> " + std::to_string(now.size));
    if (opened.etag.empty() != now.etag.empty())
        return changed(opened,
            "ETag " + (opened.etag.empty() ? "none" : opened.etag) + " -> "
                + (now.etag.empty() ? "none" : now.etag));
    if (const std::string how = validatorChange(now.etag, now.lastModified, opened); !how.empty())
        return changed(opened, how);
    return {};
}

} // namespace repack
