// Freeing the structures of a 100,000-tensor model (its protos, a snapshot's rows) takes tens of
// milliseconds; the GUI thread hands them to a pool thread instead of stalling on the frees.
#pragma once

#include <QThreadPool>

#include <utility>

namespace ui {

// Destroys `value` on a thread of the global pool. Only what `value` alone holds is freed there:
// data it shares (an implicitly shared QList, a shared_ptr) is freed by whoever lets go last.
template <class T> void releaseInBackground(T value)
{
    // A plain pointer: however often the pool copies the function, exactly one delete runs there.
    T* owned = new T(std::move(value));
    QThreadPool::globalInstance()->start([owned] { delete owned; });
}

} // namespace ui
