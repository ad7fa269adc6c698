// What a response to a request of HttpTransport said, and whether it may be read: the checks of
// docs/remote-sources-design.md 3.2 ("RangeCheck"), apart from the transfer so they can be
// tested without a server.
#pragma once

#include "http_transport.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace repack {

// Whether two header names are the same name (RFC 9110 5.1: any case).
bool sameHeaderName(std::string_view a, std::string_view b);

// The headers of one response. libcurl hands over the header lines of every response of a
// transfer (a 100 Continue, a redirect), so a status line starts a new head.
struct ResponseHead {
    long status = 0;
    std::string contentRange;
    std::optional<uint64_t> contentLength;
    std::string etag;
    std::string lastModified;
    // Every header of the response in order, names as sent (HttpTransport::head's answer).
    std::vector<std::pair<std::string, std::string>> fields;
    void addLine(std::string_view line);
};

// "bytes FIRST-LAST/TOTAL" or "bytes FIRST-LAST/*" (RFC 9110 14.4: the total not known to the
// server), nothing else; nullopt for any other text.
struct ContentRange {
    uint64_t first = 0;
    uint64_t last = 0;
    std::optional<uint64_t> total;
};
std::optional<ContentRange> parseContentRange(std::string_view text);

// How long a Retry-After value (RFC 9110 10.2.3: delay-seconds, or an HTTP-date in any of its
// three forms) asks to wait, `now` being the time it is read, at most `cap`: the value is
// clamped before any conversion, so no number a server sends overflows. nullopt for a value
// that is neither; zero for a date in the past.
std::optional<std::chrono::seconds> parseRetryAfter(
    std::string_view value, std::chrono::system_clock::time_point now, std::chrono::seconds cap);

// Whether `head`, the answer to a GET of bytes [offset, offset + length) of `file`, may be read:
// a 206 of exactly that range of a file of file.size bytes with file's validators. Changed when
// the file is not the one opened (412, another ETag, size or Last-Modified), Corrupt when the
// server answers something else (200 to a range request, another range, a wrong length).
Status checkRangeResponse(
    const ResponseHead& head, const RemoteFile& file, uint64_t offset, uint64_t length);

// Whether `now` (a stat of the file at another address: a signed address given again) is the
// file `opened`: its size and validators. Changed when it is not, saying what differs.
Status checkSameFile(const RemoteFile& now, const RemoteFile& opened);

} // namespace repack
