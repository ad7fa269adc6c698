// How a save running without the GIL hears from Python: the progress callback, Ctrl+C and a
// cancel token or threading.Event, all through the core's ProgressCallback and CancelToken.
#pragma once

#include "core/progress.h"

#include <pybind11/pybind11.h>

#include <chrono>
#include <future>
#include <optional>
#include <utility>

namespace repack::python {

// A CancelToken Python code holds: cancel() from any thread (or a signal handler) stops a
// save at its next chunk.
struct PyCancelToken {
    CancelToken token;
};

// One save and what Python says to it meanwhile. run() does the core's work on a thread of its
// own while the caller's thread, Python's, looks every 50 ms for Ctrl+C (signals are handled on
// Python's main thread only), the CancelToken and the threading.Event: a save that waits on a
// server calls no progress callback, yet stops within about a second (the transport hears the
// token at least once a second). The progress callback runs on the saving thread, taking the
// GIL only to call `callback`, at most a few times a second. Whatever Python raises, there or
// for a signal, is kept, and the save cancelled.
class SaveWatch {
public:
    // `cancel`: None, an onnx_repack.CancelToken or a threading.Event; raises UsageError else.
    SaveWatch(pybind11::object callback, pybind11::object cancel);
    ~SaveWatch();
    SaveWatch(const SaveWatch&) = delete;
    SaveWatch& operator=(const SaveWatch&) = delete;

    const CancelToken* token() const { return &m_token; }
    ProgressCallback callback()
    {
        return [this](const Progress& p) { onProgress(p); };
    }
    // Runs `work` (the save, reading no Python object) to its end without the GIL, from a
    // thread holding it; returns what `work` returned.
    template <typename Work> auto run(Work&& work) -> decltype(work())
    {
        poll(); // a token cancelled before: the save sees it at its first step
        auto running = std::async(std::launch::async, std::forward<Work>(work));
        for (;;) {
            {
                pybind11::gil_scoped_release unlocked;
                if (running.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready)
                    break;
            }
            poll();
        }
        return running.get();
    }
    // After the save, with the GIL held: raises again what the callback or a signal raised.
    void raisePending();

private:
    using Clock = std::chrono::steady_clock;
    void onProgress(const Progress& p);
    // With the GIL held, while the save runs: cancels it on Ctrl+C (kept to raise after), the
    // user's token or event.
    void poll();
    // Keeps the Python error being handled (the first one) and cancels the save.
    void keepPending(pybind11::error_already_set& error);

    pybind11::object m_callback;
    pybind11::object m_event;
    const CancelToken* m_userToken = nullptr;
    CancelToken m_token;
    std::optional<pybind11::error_already_set> m_pending;
    Clock::time_point m_lastCall{};
    size_t m_calls = 0;
};

} // namespace repack::python
