#include "paths.h"

namespace fs = std::filesystem;

namespace repack {

bool isUnder(const fs::path& path, const fs::path& dir)
{
    auto p = path.begin();
    for (auto d = dir.begin(); d != dir.end(); ++d, ++p) {
        if (d->empty() && std::next(d) == dir.end())
            break; // trailing separator
        if (p == path.end() || *p != *d)
            return false;
    }
    return true;
}

fs::path resolvedName(const fs::path& path)
{
    std::error_code ec;
    fs::path out = fs::weakly_canonical(path, ec);
    return ec ? path.lexically_normal() : out;
}

fs::path normalFolder(const fs::path& path)
{
    std::error_code ec;
    fs::path out = fs::absolute(path, ec);
    out = (ec ? path : out).lexically_normal();
    return out.has_filename() || out == out.root_path() ? out : out.parent_path();
}

} // namespace repack
