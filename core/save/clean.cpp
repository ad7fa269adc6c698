#include "clean.h"

#include "core/file_names.h"
#include "core/inspect/folder_scan.h"
#include "core/model/model.h"
#include "core/posix_file.h"
#include "core/save_lock.h"

#include <cerrno>
#include <unistd.h>

namespace fs = std::filesystem;

namespace repack {

void removeOwnLeftovers(const Model& model, const std::set<std::string>& finals)
{
    if (auto leftovers = deadSaveLeftovers(model))
        for (const auto& e : *leftovers)
            if (finals.count(finalNameOfTemp(e.path.filename().string())))
                ::unlink(e.path.c_str());
}

Result<std::vector<FolderEntry>> removeLeftovers(const fs::path& modelPath)
{
    std::error_code ec;
    const fs::path folder = fs::absolute(modelPath, ec).lexically_normal().parent_path();
    auto busy = [](const fs::path& dir) {
        return Error{
            "another save is running in " + dir.string() + "; run clean again when it has finished",
            ErrorKind::Busy};
    };
    // Locked before the model is read: a save that commits meanwhile could name temporaries
    // that the model read a moment earlier does not.
    auto lock = FolderLock::acquire({folder}, 0, nullptr);
    if (!lock)
        return FolderLock::isHeld(folder) ? busy(folder) : lock.error();
    auto model = Model::load(modelPath);
    if (!model)
        return model.error();
    std::vector<fs::path> subfolders = scannedFolders(**model);
    subfolders.erase(subfolders.begin()); // the model's folder, locked above
    std::erase_if(subfolders, [&](const fs::path& dir) { return samePathOrFile(dir, folder); });
    FolderLock subLock;
    if (!subfolders.empty()) {
        auto locked = FolderLock::acquire(subfolders, 0, nullptr);
        if (!locked) {
            for (const auto& dir : subfolders)
                if (FolderLock::isHeld(dir))
                    return busy(dir);
            return locked.error();
        }
        subLock = std::move(*locked);
    }

    auto leftovers = deadSaveLeftovers(**model); // every folder locked: no live save's
    if (!leftovers)
        return leftovers.error();
    std::vector<FolderEntry> removed;
    std::set<fs::path> touched;
    for (const auto& e : *leftovers) {
        if (::unlink(e.path.c_str()) != 0 && errno != ENOENT)
            return Error::io(systemMessage("cannot remove", e.path) + " (removed "
                + std::to_string(removed.size()) + " other leftover(s) before)");
        removed.push_back(e);
        touched.insert(e.path.parent_path());
    }
    for (const auto& dir : touched)
        if (Status s = fsyncDirectory(dir); !s)
            return Error::io("removed " + std::to_string(removed.size())
                + " leftover(s), but the folder may not keep the change: " + s.error().message);
    return removed;
}

} // namespace repack
