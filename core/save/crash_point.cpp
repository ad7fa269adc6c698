#include "crash_point.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace repack {

void crashPoint(const char* name)
{
    static const char* target = std::getenv("ONNX_REPACK_CRASH_AT");
    if (target && std::strcmp(target, name) == 0)
        std::raise(SIGKILL);
}

bool failPoint(const char* name)
{
    const char* list = std::getenv("ONNX_REPACK_FAIL_AT");
    if (!list)
        return false;
    std::string_view rest(list);
    const std::string_view wanted(name);
    while (!rest.empty()) {
        const size_t comma = rest.find(',');
        if (rest.substr(0, comma) == wanted)
            return true;
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return false;
}

} // namespace repack
