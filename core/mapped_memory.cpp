#include "mapped_memory.h"

#include <csetjmp>
#include <csignal>
#include <mutex>

#include <pthread.h>

namespace repack::detail {
namespace {

// The jump of the innermost readMapped running on this thread; null outside one.
thread_local sigjmp_buf* t_jump = nullptr;
struct sigaction g_previous { };

void onBusError(int signal, siginfo_t* info, void* context)
{
    if (t_jump)
        siglongjmp(*t_jump, 1);
    // Not a read of ours: whoever handled SIGBUS before us (a sanitizer, an embedding
    // interpreter, a test framework) gets it as the kernel would have given it, one-shot
    // handlers included; with no one, the default action ends the process as it would have.
    if (g_previous.sa_flags & SA_RESETHAND)
        std::signal(SIGBUS, SIG_DFL);
    if (g_previous.sa_flags & SA_SIGINFO) {
        if (g_previous.sa_sigaction) {
            g_previous.sa_sigaction(signal, info, context);
            return;
        }
    } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
        g_previous.sa_handler(signal);
        return;
    }
    std::signal(SIGBUS, SIG_DFL); // returning re-runs the faulting access, which now kills
}

void installHandler()
{
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction action { };
        action.sa_sigaction = onBusError;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        ::sigaction(SIGBUS, &action, &g_previous);
    });
}

} // namespace

bool callCatchingBusError(void (*fn)(void*), void* context)
{
    installHandler();
    sigjmp_buf jump;
    sigjmp_buf* const outer = t_jump;
    // No signal mask is saved (a system call per read); the fault path unblocks SIGBUS itself.
    if (sigsetjmp(jump, 0) != 0) {
        t_jump = outer;
        sigset_t bus;
        sigemptyset(&bus);
        sigaddset(&bus, SIGBUS);
        ::pthread_sigmask(SIG_UNBLOCK, &bus, nullptr);
        return false;
    }
    t_jump = &jump;
    fn(context);
    t_jump = outer;
    return true;
}

} // namespace repack::detail
