// The process environment as the remote sources read it, behind a function so that
// tests give their own variables instead of changing the process's.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace repack {

// A variable of the environment, or nothing when unset (getenv, or a map in tests).
using Environment = std::function<std::optional<std::string>(const char* name)>;
Environment processEnvironment();

// A variable that is set and not empty (an empty one counts as unset, as the Hub's and AWS's
// own tools read them).
std::optional<std::string> setVariable(const Environment& env, const char* name);

// `text` without the white space at its ends.
std::string trimmed(const std::string& text);

} // namespace repack
