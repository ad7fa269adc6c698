// How a save running without the GIL hears from Python: the progress callback, Ctrl+C and a
// cancel token or threading.Event, all through the core's ProgressCallback and CancelToken.
#pragma once

#include "core/progress.h"

#include <pybind11/pybind11.h>

#include <chrono>
#include <optional>

namespace repack::python {

// A CancelToken Python code holds: cancel() from any thread (or a signal handler) stops a
// save at its next chunk.
struct PyCancelToken {
    CancelToken token;
};

// The core's progress callback during one save. It runs on the saving thread without the GIL;
// it takes the GIL only to check for signals (Ctrl+C) and to call `callback`, each at most a
// few times a second. Whatever Python raises there is kept, and the save cancelled.
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
    // After the save, with the GIL held: raises again what the callback or a signal raised.
    void raisePending();

private:
    using Clock = std::chrono::steady_clock;
    void onProgress(const Progress& p);

    pybind11::object m_callback;
    pybind11::object m_event;
    const CancelToken* m_userToken = nullptr;
    CancelToken m_token;
    std::optional<pybind11::error_already_set> m_pending;
    Clock::time_point m_lastCall{}, m_lastCheck{};
    size_t m_calls = 0;
};

} // namespace repack::python
