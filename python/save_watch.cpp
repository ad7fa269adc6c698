#include "save_watch.h"

#include "errors.h"

namespace py = pybind11;

namespace repack::python {

SaveWatch::SaveWatch(py::object callback, py::object cancel)
    : m_callback(std::move(callback))
{
    if (py::isinstance<PyCancelToken>(cancel))
        m_userToken = &cancel.cast<PyCancelToken&>().token;
    else if (!cancel.is_none() && py::hasattr(cancel, "is_set"))
        m_event = std::move(cancel); // a threading.Event
    else if (!cancel.is_none())
        raiseUsage("cancel: expected an onnx_repack.CancelToken or a threading.Event");
}

SaveWatch::~SaveWatch()
{
    // The Python objects go with the GIL held (the caller holds it again by then).
    m_event = py::object();
    m_callback = py::object();
}

void SaveWatch::raisePending()
{
    if (m_pending)
        throw *m_pending;
}

void SaveWatch::keepPending(py::error_already_set& error)
{
    if (!m_pending)
        m_pending = error;
    m_token.cancel();
}

void SaveWatch::poll()
{
    try {
        if (PyErr_CheckSignals() != 0)
            throw py::error_already_set();
        if ((m_userToken && m_userToken->isCancelled())
            || (m_event && m_event.attr("is_set")().cast<bool>()))
            m_token.cancel();
    } catch (py::error_already_set& e) {
        keepPending(e);
    }
}

void SaveWatch::onProgress(const Progress& p)
{
    if (m_token.isCancelled() || m_callback.is_none())
        return;
    const auto now = Clock::now();
    const bool final = p.bytesTotal && p.bytesDone == p.bytesTotal;
    if (m_calls > 0 && !final && now - m_lastCall < std::chrono::milliseconds(200))
        return;
    py::gil_scoped_acquire gil;
    try {
        ++m_calls;
        m_lastCall = now;
        m_callback(p.bytesDone, p.bytesTotal, std::string(p.tensor));
    } catch (py::error_already_set& e) {
        keepPending(e);
    } catch (const std::exception& e) {
        // Never unwind through the core: kept as a Python error, raised after the save.
        PyErr_SetString(PyExc_RuntimeError, e.what());
        py::error_already_set error;
        keepPending(error);
    }
}

} // namespace repack::python
