#include "save_lock.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <set>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>

namespace fs = std::filesystem;

namespace repack {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(20);

} // namespace

Result<FolderLock> FolderLock::acquire(
    std::vector<fs::path> dirs, int waitMs, const CancelToken* cancel)
{
    // Fold aliases (a symlinked folder, "a/../a") by their real path; sorted, so every save
    // takes a shared set of folders in the same order.
    std::set<fs::path> real;
    for (const auto& dir : dirs) {
        std::error_code ec;
        fs::path canonical = fs::canonical(dir, ec);
        if (ec)
            return Error{"folder " + dir.string() + " does not exist", ErrorKind::NotFound};
        real.insert(canonical);
    }
    FolderLock lock;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(waitMs);
    for (const auto& dir : real) {
        auto fd = UniqueFd::openDirectory(dir);
        if (!fd && errno == EACCES)
            return Error::io("folder " + dir.string()
                + " may be written but not read: another save of it cannot be excluded and the "
                  "models in it that read these files cannot be found; give it read permission "
                  "(chmod u+r) to save there");
        if (!fd)
            return fd.error();
        while (::flock(fd->get(), LOCK_EX | LOCK_NB) != 0) {
            if (errno == EINTR)
                continue;
            if (errno != EWOULDBLOCK)
                return Error::io(systemMessage("cannot lock folder", dir));
            if (cancel && cancel->isCancelled())
                return cancelled("save");
            if (std::chrono::steady_clock::now() >= deadline)
                return Error{"another save is writing into " + dir.string()
                        + "; try again when it has finished",
                    ErrorKind::Busy};
            std::this_thread::sleep_for(kPollInterval);
        }
        lock.m_fds.push_back(std::move(*fd));
    }
    return lock;
}

bool FolderLock::isHeld(const fs::path& dir)
{
    auto fd = UniqueFd::openDirectory(dir);
    if (!fd)
        return false;
    if (::flock(fd->get(), LOCK_EX | LOCK_NB) == 0) {
        ::flock(fd->get(), LOCK_UN);
        return false;
    }
    return errno == EWOULDBLOCK;
}

} // namespace repack
