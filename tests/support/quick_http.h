// HttpOptions for the remote suites' faults, which need no patience: quick to give up (a 2 s
// stall is a timeout, 3 attempts in all) and quick to try again. Header only: the support
// library does not link repack_remote, the suites that include this do.
#pragma once

#include "core/remote/http_transport.h"

#include <chrono>

namespace fixtures {

inline repack::HttpOptions quickHttpOptions()
{
    using namespace std::chrono_literals;
    repack::HttpOptions options;
    options.connectTimeout = 5000ms;
    options.stallTime = 2s;
    options.maxAttempts = 3;
    options.backoffBase = 10ms;
    options.backoffCap = 50ms;
    options.retryAfterCap = 100ms;
    return options;
}

} // namespace fixtures
