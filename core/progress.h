// Progress reporting and cancellation for long operations, without any Qt: the GUI wraps the
// callback in a throttled signal and sets the token from its Cancel button.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>

namespace repack {

struct Progress {
    uint64_t bytesDone = 0;
    uint64_t bytesTotal = 0;
    std::string_view tensor; // the tensor being processed, valid during the callback only
    // What the bytes are of when an operation has phases ("comparing", "writing"), each counted
    // from 0 to its own total; empty for one phase. Valid during the callback only.
    std::string_view phase;
};

// Called from the working thread, between chunks; keep it cheap.
using ProgressCallback = std::function<void(const Progress&)>;

class CancelToken {
public:
    void cancel() { m_cancelled.store(true, std::memory_order_relaxed); }
    bool isCancelled() const { return m_cancelled.load(std::memory_order_relaxed); }

private:
    std::atomic<bool> m_cancelled{false};
};

} // namespace repack
