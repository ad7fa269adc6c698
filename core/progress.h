// Progress reporting and cancellation for long operations, without any Qt: the GUI wraps the
// callback in a throttled signal and sets the token from its Cancel button.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
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

// What stops one command, and what bounds it: the user's cancel (the GUI's Cancel button, the
// CLI's SIGINT and SIGTERM, Python's Ctrl+C), a deadline for the whole command (--timeout), and
// the retries its network requests may still make (earned back only by real progress). One token
// per command, handed to everything the command does, so a budget is never recreated by a callee.
// It also carries who hears what the command is waiting for (the CLI's stderr, the GUI's progress
// line).
class CancelToken {
public:
    using Clock = std::chrono::steady_clock;
    // Retries a command's requests may make in all, whatever their progress.
    static constexpr int kDefaultRetries = 12;
    // Told, from the working thread, what the command waits for ("example.org: model.onnx,
    // attempt 2 of 5 (HTTP 503), next in 4 s"); empty when the wait is over. Keep it cheap.
    using WaitObserver = std::function<void(const std::string& what)>;

    void cancel() { m_cancelled.store(true, std::memory_order_relaxed); }
    // Whether the command should stop: cancelled, or past its deadline.
    bool isCancelled() const
    {
        if (m_cancelled.load(std::memory_order_relaxed))
            return true;
        const int64_t deadline = m_deadline.load(std::memory_order_relaxed);
        return deadline != kNoDeadline && Clock::now().time_since_epoch().count() >= deadline;
    }

    // The whole command stops at `deadline` as if cancelled; timedOut() then tells why.
    void setDeadline(Clock::time_point deadline)
    {
        m_deadline.store(deadline.time_since_epoch().count(), std::memory_order_relaxed);
    }
    bool timedOut() const
    {
        const int64_t deadline = m_deadline.load(std::memory_order_relaxed);
        return !m_cancelled.load(std::memory_order_relaxed) && deadline != kNoDeadline
            && Clock::now().time_since_epoch().count() >= deadline;
    }
    // Time left before the deadline; Clock::duration::max() when there is none.
    Clock::duration remaining() const
    {
        const int64_t deadline = m_deadline.load(std::memory_order_relaxed);
        if (deadline == kNoDeadline)
            return Clock::duration::max();
        return Clock::duration(deadline) - Clock::now().time_since_epoch();
    }

    // Takes one retry from the command's budget: false when none is left.
    bool takeRetry() const
    {
        int now = m_retries.load(std::memory_order_relaxed);
        while (now > 0
            && !m_retries.compare_exchange_weak(now, now - 1, std::memory_order_relaxed)) { }
        return now > 0;
    }
    void setRetryBudget(int retries)
    {
        m_retries.store(retries, std::memory_order_relaxed);
        m_retryCap.store(retries, std::memory_order_relaxed);
    }
    // Counts `bytes` the command's requests received: every kBytesPerRetry of them gives one
    // retry back, never past the budget it was given. A long read on a flaky link keeps its
    // retries; a trickle never earns one.
    static constexpr uint64_t kBytesPerRetry = 64ull << 20;
    void received(uint64_t bytes) const
    {
        const uint64_t before = m_received.fetch_add(bytes, std::memory_order_relaxed);
        for (uint64_t earned = (before + bytes) / kBytesPerRetry - before / kBytesPerRetry;
             earned > 0; --earned) {
            int now = m_retries.load(std::memory_order_relaxed);
            while (now < m_retryCap.load(std::memory_order_relaxed)
                && !m_retries.compare_exchange_weak(now, now + 1, std::memory_order_relaxed)) { }
        }
    }
    int retriesLeft() const { return std::max(0, m_retries.load(std::memory_order_relaxed)); }

    void setWaitObserver(WaitObserver observer)
    {
        std::lock_guard lock(m_observerMutex);
        m_observer = std::make_shared<const WaitObserver>(std::move(observer));
    }
    // Says what the command waits for (or, with "", that it waits no more) to the observer.
    void waiting(const std::string& what) const
    {
        std::shared_ptr<const WaitObserver> observer;
        {
            std::lock_guard lock(m_observerMutex);
            observer = m_observer;
        }
        if (observer && *observer)
            (*observer)(what);
    }

private:
    static constexpr int64_t kNoDeadline = INT64_MAX;
    std::atomic<bool> m_cancelled{false};
    std::atomic<int64_t> m_deadline{kNoDeadline};
    mutable std::atomic<int> m_retries{kDefaultRetries};
    std::atomic<int> m_retryCap{kDefaultRetries};
    mutable std::atomic<uint64_t> m_received{0};
    mutable std::mutex m_observerMutex;
    std::shared_ptr<const WaitObserver> m_observer;
};

// The token's retry, or, without a token, always one (each request is bounded by its own
// attempts then).
inline bool takeRetry(const CancelToken* token)
{
    return !token || token->takeRetry();
}

} // namespace repack
