// An Environment (core/io/environment.h) of the given variables only: tests of what the
// remote sources read from the environment, without changing the process's.
#pragma once

#include "core/io/environment.h"

#include <map>
#include <string>

namespace fixtures {

inline repack::Environment mapEnvironment(std::map<std::string, std::string> values)
{
    return [values = std::move(values)](const char* name) -> std::optional<std::string> {
        auto it = values.find(name);
        return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
}

} // namespace fixtures
