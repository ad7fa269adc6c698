#include "save_steps.h"

#include "data_writer.h"
#include "model.h"
#include "posix_file.h"

#include <cerrno>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace repack {
namespace {

bool isUnder(const fs::path& path, const fs::path& dir)
{
    const auto rel = path.lexically_relative(dir);
    return !rel.empty() && *rel.begin() != "..";
}

// A data path that is a symlink is written through: its target is replaced, the link kept.
Result<fs::path> realTarget(const fs::path& finalPath, const fs::path& realDir)
{
    struct stat st { };
    if (::lstat(finalPath.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
        return finalPath;
    std::error_code ec;
    fs::path real = fs::weakly_canonical(finalPath, ec);
    if (ec || !isUnder(real, realDir))
        return Error{finalPath.string() + " is a symlink that leads outside the model's folder"};
    return real;
}

} // namespace

std::optional<FileId> fileId(const fs::path& path)
{
    struct stat st { };
    if (::stat(path.c_str(), &st) != 0)
        return std::nullopt;
    return FileId{st.st_dev, st.st_ino};
}

Result<std::vector<DataTarget>> writeDataTemps(
    const SavePlan& plan, const fs::path& dir, DataWriter& writer, TempCleanup& cleanup)
{
    std::error_code ec;
    const fs::path realDir = fs::canonical(dir, ec);
    if (ec)
        return Error{"folder " + dir.string() + " does not exist"};
    std::vector<DataTarget> targets;
    for (size_t f = 0; f < plan.files.size(); ++f) {
        DataTarget target;
        target.finalPath = (dir / plan.files[f]).lexically_normal();
        auto real = realTarget(target.finalPath, realDir);
        if (!real)
            return real.error();
        target.realPath = *real;
        auto temp = createTempFor(target.realPath);
        if (!temp)
            return temp.error();
        cleanup.add(temp->path);
        target.temp = std::move(*temp);
        if (Status s = writer.write(f, target.temp.fd.get(), target.temp.path); !s)
            return s.error();
        if (::close(target.temp.fd.release()) != 0)
            return Error{systemMessage("cannot write", target.temp.path)};
        targets.push_back(std::move(target));
    }
    return targets;
}

Status renameSynced(const fs::path& from, const fs::path& to)
{
    if (::rename(from.c_str(), to.c_str()) != 0)
        return Error{systemMessage("cannot rename " + from.string() + " to", to)};
    return fsyncDirectory(to.parent_path());
}

Status swapIn(const DataTarget& target, bool keepTemp)
{
    if (!keepTemp)
        return renameSynced(target.temp.path, target.realPath);
    const fs::path link = tempNameFor(target.realPath);
    if (::link(target.temp.path.c_str(), link.c_str()) != 0) {
        // No hard links here (some FUSE and FAT file systems): rename the temporary itself.
        if (errno != EPERM && errno != EOPNOTSUPP && errno != EXDEV)
            return Error{systemMessage("cannot link", link)};
        return renameSynced(target.temp.path, target.realPath);
    }
    if (Status s = renameSynced(link, target.realPath); !s) {
        ::unlink(link.c_str());
        return s;
    }
    return {};
}

std::vector<fs::path> readsReplacedBy(const Model& model, const std::vector<DataTarget>& targets)
{
    std::set<FileId> replaced;
    for (const auto& t : targets)
        if (auto id = fileId(t.realPath))
            replaced.insert(*id);
    std::set<fs::path> read; // one stat per data file, not per tensor
    for (const auto& info : model.tensors())
        if (info.isExternal() && !info.external.resolvedPath.empty())
            read.insert(info.external.resolvedPath);
    std::vector<fs::path> out;
    for (const auto& path : read)
        if (auto id = fileId(path); id && replaced.count(*id))
            out.push_back(path);
    return out;
}

} // namespace repack
