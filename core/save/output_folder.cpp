#include "output_folder.h"

#include <system_error>

namespace fs = std::filesystem;

namespace repack {

Result<std::vector<fs::path>> createOutputFolders(const fs::path& file)
{
    std::vector<fs::path> missing;
    std::error_code ec;
    const fs::path parent = file.parent_path();
    if (!parent.empty() && fs::exists(parent, ec) && !fs::is_directory(parent, ec))
        return Error::usage("the output folder " + parent.string() + " is not a folder");
    for (fs::path dir = parent; !dir.empty() && !fs::exists(dir, ec); dir = dir.parent_path()) {
        missing.insert(missing.begin(), dir);
        if (dir == dir.parent_path())
            break;
    }
    if (missing.empty())
        return missing;
    if (!fs::create_directories(parent, ec) && ec)
        return Error::io(
            "cannot create the output folder " + parent.string() + ": " + ec.message());
    return missing;
}

void removeCreatedFolders(const std::vector<fs::path>& created)
{
    std::error_code ec;
    for (auto it = created.rbegin(); it != created.rend(); ++it)
        if (!fs::remove(*it, ec))
            break;
}

} // namespace repack
