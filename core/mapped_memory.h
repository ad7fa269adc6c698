// Reading memory-mapped files that may shrink underneath (SPEC 5c). When another program
// truncates a mapped file, touching a page past its new end raises SIGBUS, which kills the
// process. Every read of mapped bytes runs inside readMapped: a SIGBUS there abandons the read
// and becomes an error naming the file, never a dead process.
//
// The code inside may only read the mapping into memory the caller already owns (memcpy into
// a buffer, memcmp, hashing with a context declared outside): the fault unwinds it with
// siglongjmp, which runs no destructor of what it abandons.
#pragma once

#include "result.h"

#include <string>
#include <type_traits>
#include <utility>

namespace repack {

namespace detail {
// Calls fn(context); false when a SIGBUS raised on this thread inside it was caught.
bool callCatchingBusError(void (*fn)(void*), void* context);
} // namespace detail

// Runs `touch()`; if it faults on a mapping whose file shrank, the error "`what`: the file shrank
// or changed while it was read ...". `what` names the tensor and the file it reads.
template <typename F> Status readMapped(const std::string& what, F&& touch)
{
    using Fn = std::remove_reference_t<F>;
    auto call = [](void* context) { (*static_cast<Fn*>(context))(); };
    if (detail::callCatchingBusError(call, &touch))
        return {};
    return Error::io(what
        + ": the file shrank or changed while it was read (truncated or rewritten by another "
          "program); reopen the model");
}

} // namespace repack
