// Entry point of `onnx-repack`. Exit codes: 0 ok, 1 problems found or operation failed,
// 2 usage error.
#pragma once

#include "core/result.h"

#include <iosfwd>
#include <string>

namespace repack::cli {

// 3: the save would replace files other models read (or files the model does not use), and
// --force was not given: nothing was written.
enum ExitCode { Ok = 0, Failed = 1, Usage = 2, NeedsForce = 3 };
// The exit code of a command the core refused, by its kind (core/result.h's kErrorKinds): Usage
// for a usage error, NeedsForce when it needs consent, else Failed.
int exitCodeFor(const Error& error);

int run(int argc, const char* const* argv);

// `onnx-repack inspect MODEL` as text, for the GUI's no-display fallback.
// `deep` adds the audit checks that read weight bytes (duplicate-bytes); `target` audits for
// that save target's readers too (its alignment); `align` (a size, as --align takes it) is the
// alignment the data files were written with, their gaps counted against it.
int inspect(const char* modelPath, bool json, std::ostream& out, std::ostream& err,
    bool deep = false, const std::string& target = {}, const std::string& align = {});

} // namespace repack::cli
