// One save at a time per folder (SPEC 5a): a save holds an exclusive advisory lock (flock) on
// every folder it writes into, for as long as its temporaries may exist. Whoever holds a
// folder's lock knows that every temporary in it belongs to a save that is no longer running.
// flock locks belong to open file descriptions, so two saves in one process exclude each
// other too; the kernel drops the lock when a killed process's descriptors close. A folder the
// user may write into but not list (mode -wx) cannot be opened to lock it, nor listed for the
// models that read its files: a save there is refused, saying why.
#pragma once

#include "posix_file.h"
#include "progress.h"
#include "result.h"

#include <filesystem>
#include <vector>

namespace repack {

class FolderLock {
public:
    FolderLock() = default;
    FolderLock(FolderLock&&) = default;
    FolderLock& operator=(FolderLock&&) = default;

    // Locks every folder of `dirs` (duplicates and aliases folded, taken in a fixed order so two
    // saves cannot deadlock), waiting up to `waitMs` for another save to finish; `cancel` stops
    // the wait. The error names the busy folder.
    static Result<FolderLock> acquire(
        std::vector<std::filesystem::path> dirs, int waitMs, const CancelToken* cancel = nullptr);

    // True when a running save (of any process, this one included) holds `dir`'s lock.
    static bool isHeld(const std::filesystem::path& dir);

private:
    std::vector<UniqueFd> m_fds;
};

} // namespace repack
