#include "command_token.h"

#include "cli.h"
#include "progress_bar.h"
#include "terminal_text.h"

#include "core/io/source_spec.h"

#include <CLI/CLI.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <optional>

namespace repack::cli {
namespace {

// The signal handler's only work is CancelToken::cancel(), a relaxed store to an atomic<bool>:
// async-signal-safe only while that atomic never takes a lock.
static_assert(std::atomic<bool>::is_always_lock_free);

// Static storage: the token outlives every thread that reads it, and the handler needs no
// pointer to find it.
CancelToken g_token;
volatile std::sig_atomic_t g_signal = 0; // the first stop signal, 0 before any

extern "C" void onStopSignal(int signal)
{
    if (g_signal == 0)
        g_signal = signal;
    g_token.cancel();
}

// What the command is doing and waiting for, and what its messages need: written by the
// command's thread and the threads its work waits on.
struct CommandState {
    std::mutex mutex;
    std::string name; // "repack"
    std::string step, leaves; // commandStep's
    bool partial = false;
    std::string waiting; // the wait going on now, "" when none
    std::string printed; // the last wait said on stderr
    std::string limit; // "--timeout 2 s", "" without a deadline
    bool reported = false; // reportFailure said how the command ended
};

CommandState& state()
{
    static CommandState s;
    return s;
}

// The option's value as typed, and whether it was given (an empty value is one too).
struct TimeoutOption {
    std::string text;
    bool given = false;
};
TimeoutOption& timeoutOption()
{
    static TimeoutOption option;
    return option;
}

// `text` as seconds: a finite number >= 0 (0: no deadline); nullopt when it is not one.
std::optional<double> parseSeconds(const std::string& text)
{
    if (text.empty())
        return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const double seconds = std::strtod(text.c_str(), &end);
    if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(seconds) || seconds < 0)
        return std::nullopt;
    return seconds;
}

// Installs the stop handler for `signal`, unless the process started with it ignored. The
// handler runs once: a second signal while the command stops takes the default action.
void catchStop(int signal)
{
    struct sigaction previous { };
    if (::sigaction(signal, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN)
        return;
    struct sigaction action { };
    action.sa_handler = onStopSignal;
    ::sigemptyset(&action.sa_mask);
    ::sigaddset(&action.sa_mask, SIGINT); // one handler at a time records the signal
    ::sigaddset(&action.sa_mask, SIGTERM);
    // SA_RESTART: a system call the signal interrupts goes on; the token stops the work.
    action.sa_flags = SA_RESETHAND | SA_RESTART;
    ::sigaction(signal, &action, nullptr);
}

// "(while saving out/model.onnx, waiting for ...)", or "" when nothing is known.
std::string whileText(CommandState& s)
{
    std::string doing = s.step;
    if (!s.waiting.empty())
        doing += (doing.empty() ? "waiting for " : ", waiting for ") + s.waiting;
    return doing.empty() ? std::string() : " (while " + printable(doing) + ")";
}

} // namespace

void addTimeoutOption(CLI::App& sub)
{
    sub.add_option("--timeout", timeoutOption().text,
           "Stop the whole command after SECONDS (default: ONNX_REPACK_TIMEOUT, else none; 0 = "
           "none): like a cancel, it leaves nothing new at the output, and exits 1")
        ->type_name("SECONDS")
        ->each([](const std::string&) { timeoutOption().given = true; });
}

bool startCommand(const std::string& name)
{
    const auto start = CancelToken::Clock::now();
    CommandState& s = state();
    {
        std::lock_guard lock(s.mutex);
        s.name = name;
    }
    std::string text = timeoutOption().text;
    std::string given = "--timeout "; // how messages name the limit
    if (!timeoutOption().given) {
        const char* env = std::getenv("ONNX_REPACK_TIMEOUT");
        text = env ? env : "";
        given = "ONNX_REPACK_TIMEOUT=";
    }
    if (timeoutOption().given || !text.empty()) {
        const auto seconds = parseSeconds(text);
        if (!seconds) {
            std::cerr << "onnx-repack: " << given << printable(text)
                      << ": expected seconds, a number of at least 0 (0 = no limit)\n";
            return false;
        }
        if (*seconds > 0) {
            // Past what a steady clock can count, there is no deadline to speak of.
            const auto span = std::chrono::duration<double>(*seconds);
            if (span < std::chrono::duration<double>(std::chrono::hours(24 * 365 * 100)))
                g_token.setDeadline(
                    start + std::chrono::duration_cast<CancelToken::Clock::duration>(span));
            std::lock_guard lock(s.mutex);
            s.limit = given + secondsText(*seconds) + " s";
        }
    }
    g_token.setWaitObserver([](const std::string& what) { sayWaiting(what, std::cerr); });
    catchStop(SIGINT);
    catchStop(SIGTERM);
    return true;
}

void sayWaiting(const std::string& what, std::ostream& err)
{
    CommandState& s = state();
    std::lock_guard lock(s.mutex);
    // A wait a stop ends is what the command was waiting for when it stopped: kept for its
    // message.
    if (what.empty() && g_token.isCancelled())
        return;
    s.waiting = what;
    if (what.empty() || what == s.printed)
        return;
    s.printed = what;
    endProgressLine();
    err << "onnx-repack: " << printable(what) << std::endl;
}

const CancelToken* commandToken()
{
    return &g_token;
}

void commandStep(std::string doing, std::string leaves, bool partial)
{
    CommandState& s = state();
    std::lock_guard lock(s.mutex);
    s.step = std::move(doing);
    s.leaves = std::move(leaves);
    s.partial = partial;
}

std::string shownArgument(const std::string& text)
{
    const auto spec = parseSource(text);
    return spec && spec->isRemote() ? spec->display() : text;
}

bool commandStopped()
{
    return g_token.isCancelled();
}

int reportFailure(const Error& error)
{
    return reportFailure(error, std::cerr);
}

int reportFailure(const Error& error, std::ostream& err)
{
    CommandState& s = state();
    std::lock_guard lock(s.mutex);
    const int signal = g_signal;
    const bool timedOut = signal == 0 && g_token.timedOut();
    endProgressLine();
    if (signal == 0 && !timedOut) {
        err << "onnx-repack: " << printable(error.message) << '\n';
        return exitCodeFor(error);
    }
    s.reported = true;
    // A cancel is the stop itself; another error (one the stop did not cause), or the cancel of
    // a step that may have done part of its work (it says which), is said first.
    if (!error.is(ErrorKind::Cancelled) || s.partial)
        err << "onnx-repack: " << printable(error.message) << '\n';
    const std::string ended = timedOut ? " did not finish within " + s.limit
        : signal == SIGINT             ? " was stopped by SIGINT"
        : signal == SIGTERM            ? " was stopped by SIGTERM"
                                       : " was stopped by signal " + std::to_string(signal);
    err << "onnx-repack: " << s.name << ended << whileText(s)
        << (s.leaves.empty() ? "" : ": " + s.leaves) << '\n';
    return timedOut ? Failed : 128 + signal;
}

int commandExit(int code)
{
    std::string name;
    {
        std::lock_guard lock(state().mutex);
        if (state().reported)
            return code;
        name = state().name;
    }
    if (code == Ok || !commandStopped())
        return code;
    return reportFailure(cancelled(name));
}

} // namespace repack::cli
