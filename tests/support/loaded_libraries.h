// Which shared libraries this process has mapped: libraries loaded on first use (libcurl,
// libcrypto: core/shared_library.h) are mapped only once something needs them.
#pragma once

#include <link.h>

#include <string>

namespace fixtures {

// Whether a library whose file name holds `name` is mapped into this process.
inline bool isMapped(const std::string& name)
{
    struct Search {
        const std::string& name;
        bool found = false;
    } search{name};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            auto* s = static_cast<Search*>(data);
            if (info->dlpi_name && std::string(info->dlpi_name).find(s->name) != std::string::npos)
                s->found = true;
            return 0;
        },
        &search);
    return search.found;
}

} // namespace fixtures
