#include "environment.h"

#include <cstdlib>

namespace repack {

Environment processEnvironment()
{
    return [](const char* name) -> std::optional<std::string> {
        const char* value = std::getenv(name);
        return value ? std::optional<std::string>(value) : std::nullopt;
    };
}

std::optional<std::string> setVariable(const Environment& env, const char* name)
{
    auto value = env(name);
    if (value && value->empty())
        return std::nullopt;
    return value;
}

std::string trimmed(const std::string& text)
{
    const size_t first = text.find_first_not_of(" \t\r\n\v\f");
    if (first == std::string::npos)
        return {};
    return text.substr(first, text.find_last_not_of(" \t\r\n\v\f") - first + 1);
}

} // namespace repack
