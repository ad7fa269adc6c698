#include "source_watch.h"

#include "core/io/byte_source.h"
#include "core/model/model.h"
#include "core/model/model_sources.h"
#include "crash_point.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <ctime>
#include <fcntl.h>
#include <thread>

#include <sys/stat.h>

namespace fs = std::filesystem;

namespace repack {
namespace {

// How long a file open for writing elsewhere may keep a save waiting before it gives up.
constexpr auto kWriterWait = std::chrono::seconds(2);
constexpr auto kPoll = std::chrono::milliseconds(10);

// Takes a read lease on `fd`: true when granted; EAGAIN in errno when another process has the
// file open for writing. A lease break is announced by a signal (SIGIO by default, which would
// end the process): the announcement goes nowhere (no owner), and, should a break come before
// that is set, it is SIGURG, which processes ignore unless they ask for it.
bool takeReadLease(int fd)
{
    if (failPoint("lease")) {
        errno = EINVAL; // as on a file system without leases, or a file of another user
        return false;
    }
    (void)::fcntl(fd, F_SETSIG, SIGURG);
    if (::fcntl(fd, F_SETLEASE, F_RDLCK) != 0)
        return false;
    (void)::fcntl(fd, F_SETOWN, 0);
    return true;
}

int64_t coarseNowNs()
{
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
    return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// Waits until the file clock (the coarse real-time clock file times come from) has moved past
// `changedNs`, so that any later write gives the file another change time. Bounded: a change
// time in the future (another machine's clock) is taken as it is.
void waitPastTick(int64_t changedNs)
{
    for (int i = 0; i < 50 && coarseNowNs() <= changedNs; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

Error changedError(const fs::path& path, const std::string& when)
{
    return Error{path.string() + " changed " + when
            + " (written to, truncated or replaced by another program?): its bytes could be a "
              "mix of old and new; open the model again",
        ErrorKind::Changed};
}

} // namespace

Result<SourceWatch> SourceWatch::start(const Model& model, const CancelToken* cancel)
{
    SourceWatch watch;
    if (!model.path().empty())
        if (Status s = watch.watch(model.path(), model.fileIdentity(), cancel); !s)
            return s.error();
    for (const DataFile* file : sourceFilesOf(model)) {
        if (!file->isLocal())
            watch.m_remote.push_back(&file->source());
        else if (file != model.inFileSource()) // the model's own file is watched by its path
            if (Status s = watch.watch(file->path(), file->identity(), cancel); !s)
                return s.error();
    }
    return watch;
}

Status SourceWatch::watch(
    const fs::path& path, const FileIdentity& validated, const CancelToken* cancel)
{
    auto fd = UniqueFd::openRead(path);
    if (!fd)
        return Error{
            fd.error().message + " (it was there when the model was opened)", ErrorKind::Changed};
    bool leased = false;
    if (leasedCount() < kMaxLeases) {
        const auto deadline = std::chrono::steady_clock::now() + kWriterWait;
        while (!(leased = takeReadLease(fd->get())) && errno == EAGAIN) {
            if (cancel && cancel->isCancelled())
                return cancelled("save");
            if (std::chrono::steady_clock::now() > deadline)
                return Error{path.string()
                        + " is open for writing by another program: its bytes could change "
                          "while they are read; try again once it is closed",
                    ErrorKind::Changed};
            std::this_thread::sleep_for(kPoll);
        }
    }
    auto status = statusOf(fd->get());
    if (!status)
        return Error{systemMessage("cannot stat", path), ErrorKind::Changed};
    FileStamp stamp = status->stamp;
    if (!leased) {
        waitPastTick(stamp.changedNs);
        status = statusOf(fd->get());
        if (!status)
            return Error{systemMessage("cannot stat", path), ErrorKind::Changed};
        stamp = status->stamp;
    }
    if (!(stamp.identity == validated))
        return changedError(path, "since the model was opened");
    m_files.push_back({path, stamp, leased ? std::move(*fd) : UniqueFd()});
    return {};
}

Status SourceWatch::stillUnchanged(const CancelToken* cancel) const
{
    for (const Watched& w : m_files) {
        std::optional<FileStatus> now;
        if (!w.lease.valid())
            now = statusAt(w.path);
        else if (auto leased = statusOf(w.lease.get()))
            now = *leased;
        if (!now || !(now->stamp == w.stamp))
            return changedError(w.path, "while it was read");
    }
    for (const ByteSource* source : m_remote)
        if (Status same = source->revalidate(cancel); !same)
            return same.error().is(ErrorKind::Changed) || same.error().is(ErrorKind::Cancelled)
                ? same.error()
                : same.error().prefixed("checking that each file read is still the version read: ");
    return {};
}

size_t SourceWatch::leasedCount() const
{
    return static_cast<size_t>(std::count_if(
        m_files.begin(), m_files.end(), [](const Watched& w) { return w.lease.valid(); }));
}

} // namespace repack
