// One HTTP request on the transport's curl handle and what came back: the transport's loop of
// retries and redirects (http_transport.cpp) performs one per attempt and per hop.
#pragma once

#include "curl_library.h"
#include "http_response.h"
#include "http_transport.h"

#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace repack::http {

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

// Runs `exchange` once on `easy`, set up from scratch (the connection stays alive).
void perform(const Easy& easy, const HttpOptions& options, Exchange& exchange);

} // namespace repack::http
