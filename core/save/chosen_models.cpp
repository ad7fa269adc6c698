// Which graphs of a folder a save takes, and the name its messages give the folder: what both
// folder saves (one shared data file, or each graph on its own) ask first.
#include "folder_save.h"

#include "core/inspect/folder_inspect.h"
#include "core/paths.h"

#include <algorithm>

namespace repack {

std::string shownName(const FolderAccess& folder)
{
    return folder.localPath().empty() ? folder.name() : normalFolder(folder.localPath()).string();
}

Result<std::vector<std::string>> chosenModels(
    FolderAccess& folder, const std::vector<std::string>& wanted)
{
    auto names = folder.models();
    if (!names)
        return names.error();
    std::vector<std::string> chosen = wanted.empty() ? *names : wanted;
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    for (const std::string& name : chosen)
        if (std::find(names->begin(), names->end(), name) == names->end())
            return Error::usage(name + " is not a model of " + shownName(folder));
    if (chosen.empty())
        return Error::usage(shownName(folder) + " holds no .onnx model");
    return chosen;
}

} // namespace repack
