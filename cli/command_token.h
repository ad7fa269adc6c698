// The one CancelToken of the command this process runs, made here and handed to all its work
// (every open, listing, read, plan and save): SIGINT and SIGTERM cancel it as the desktop app's
// Cancel does (temporaries removed, nothing new at the output, exit 130 / 143), --timeout (or
// ONNX_REPACK_TIMEOUT) is its deadline, and what it waits for on the network is said on stderr.
#pragma once

#include "core/progress.h"
#include "core/result.h"

#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace repack::cli {

// Registers --timeout SECONDS on `sub`: every command has it.
void addTimeoutOption(CLI::App& sub);

// Readies the token for the command `name` that was parsed: its deadline (--timeout, else
// ONNX_REPACK_TIMEOUT), SIGINT and SIGTERM cancelling it, and its waits said on stderr. A signal
// that was ignored when the process started (a background job of a script: SIGINT) stays
// ignored. False, after saying why on stderr, for a timeout that is no number of seconds.
bool startCommand(const std::string& name);

// The command's token: what every command hands to its work.
const CancelToken* commandToken();

// What the command does now ("saving out/model.onnx") and what a stop leaves then, when there
// is something to say ("nothing was written"): for the message of a command stopped by a
// signal or its deadline. `partial`: a stop may leave part of the step done (the graphs of a
// folder saved each on its own), which the error it ends with names: that error is said too.
void commandStep(std::string doing, std::string leaves = {}, bool partial = false);

// What messages call the MODEL or folder argument `text`: a URL as SourceSpec::display() shows
// it (no query string, which may be a signature), a path as given.
std::string shownArgument(const std::string& text);

// The token's wait observer: says `what` the command waits for on `err` ("onnx-repack: " and
// the text, on a line of its own), once, only when it differs from the last said; "" (the wait
// is over) says nothing.
void sayWaiting(const std::string& what, std::ostream& err);

// Whether the command was stopped (a signal, its deadline): what it found may be partial.
bool commandStopped();

// Says on `err` why the command failed with `error` and returns its exit code. Stopped by a
// signal: 128 + the signal (130 SIGINT, 143 SIGTERM) and "stopped by"; by its deadline: 1 and
// "did not finish within --timeout N s (while ...)", then what the stop leaves. A cancel (the
// kind Cancelled) is said only so, unless the step is partial; another error first in its own
// words.
int reportFailure(const Error& error, std::ostream& err);
int reportFailure(const Error& error); // on stderr

// The exit code of a command that returned `code`: a failure of a stopped command that did not
// say it through reportFailure is said as a stop; a command that finished (Ok) keeps its code.
int commandExit(int code);

} // namespace repack::cli
