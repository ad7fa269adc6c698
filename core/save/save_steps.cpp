#include "save_steps.h"

#include "core/inspect/readers.h"
#include "core/model/data_file.h"
#include "core/model/model.h"
#include "core/posix_file.h"
#include "crash_point.h"
#include "data_writer.h"

#include <cerrno>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace repack {

Result<TempFile> createReplacementFor(const fs::path& finalPath)
{
    auto temp = createTempFor(finalPath);
    if (!temp)
        return temp;
    struct stat st { };
    if (::stat(finalPath.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        // Best effort for the group (only its members or root may set it); the mode always.
        (void)::fchown(temp->fd.get(), static_cast<uid_t>(-1), st.st_gid);
        if (::fchmod(temp->fd.get(), st.st_mode & 07777) != 0) {
            ::unlink(temp->path.c_str());
            return Error::io(systemMessage("cannot set the permissions of", temp->path));
        }
    }
    return temp;
}

Result<std::vector<DataTarget>> writeDataTemps(const SavePlan& plan, const fs::path& dir,
    DataWriter& writer, TempCleanup& cleanup, const std::vector<bool>& kept)
{
    std::vector<DataTarget> targets;
    std::set<fs::path> folders;
    for (size_t f = 0; f < plan.files.size(); ++f) {
        if (f < kept.size() && kept[f])
            continue;
        DataTarget target;
        target.file = f;
        target.finalPath = (dir / plan.files[f]).lexically_normal();
        auto temp = createReplacementFor(target.finalPath);
        if (!temp)
            return temp.error();
        cleanup.add(temp->path);
        target.temp = std::move(*temp);
        if (Status s = writer.write(f, target.temp.fd.get(), target.temp.path); !s)
            return s.error();
        if (::close(target.temp.fd.release()) != 0)
            return Error::io(systemMessage("cannot write", target.temp.path));
        folders.insert(target.finalPath.parent_path());
        targets.push_back(std::move(target));
    }
    // The temporaries' names must be durable before a model that names them is committed. A
    // folder that may be written but not listed cannot be synced at all; the commit's own sync
    // then reports that as a warning.
    for (const auto& folder : folders)
        if (Status s = fsyncDirectory(folder); !s && errno != EACCES)
            return s.error();
    return targets;
}

Status renameFile(const fs::path& from, const fs::path& to, const char* faultPoint)
{
    if (faultPoint && failPoint(faultPoint))
        return Error::io("cannot rename " + from.string() + " to " + to.string()
            + ": Input/output error (injected)");
    if (::rename(from.c_str(), to.c_str()) != 0)
        return Error::io(systemMessage("cannot rename " + from.string() + " to", to));
    return {};
}

Status syncFolder(const fs::path& dir)
{
    if (failPoint("fsync-dir"))
        return Error::io("cannot flush " + dir.string() + ": Input/output error (injected)");
    return fsyncDirectory(dir);
}

Status swapIn(const DataTarget& target)
{
    const fs::path link = tempNameFor(target.finalPath);
    const bool injected = failPoint("link-data");
    if (injected || ::link(target.temp.path.c_str(), link.c_str()) != 0)
        return Error::io(systemMessage("cannot link", link, injected ? EPERM : errno));
    if (Status s = renameFile(link, target.finalPath, "rename-data"); !s) {
        ::unlink(link.c_str());
        return s;
    }
    return {};
}

std::vector<fs::path> readsReplacedBy(const Model& model, const std::vector<DataTarget>& targets)
{
    std::set<FileId> replaced;
    for (const auto& t : targets)
        if (auto id = fileIdOf(t.finalPath))
            replaced.insert(*id);
    std::vector<fs::path> out;
    for (const auto& path : filesReadBy(model)) // one stat per data file, not per tensor
        if (auto id = fileIdOf(path); id && replaced.count(*id))
            out.push_back(path);
    return out;
}

Splices splicesOf(const Model& model, const SavePlan& plan, const DataWriter& writer)
{
    Splices out;
    const auto& tensors = model.tensors();
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (plan.tensors[i].external)
            continue;
        const auto length = writer.payloadLength(i);
        if (!length || *length == 0)
            continue;
        out.payloads.push_back({tensors[i].proto, *length});
        out.tensors.push_back(i);
    }
    return out;
}

Result<ModelTemp> writeModelTemp(Model& model, const fs::path& modelPath, const Splices& splices,
    DataWriter& writer, bool countProgress, TempCleanup& cleanup, const ModelTemp* copiedFrom)
{
    std::optional<DataFile> copied;
    if (copiedFrom)
        copied.emplace(copiedFrom->file.path, copiedFrom->identity);
    auto temp = createReplacementFor(modelPath);
    if (!temp)
        return temp.error();
    cleanup.add(temp->path);
    writer.startTarget();
    const int fd = temp->fd.get();
    const fs::path& tempPath = temp->path;
    auto written = writeModel(
        model.protoLeavingOut(), fd, tempPath, splices.payloads,
        [&](size_t payload, int target, uint64_t offset) {
            if (copied)
                return writer.copyCopied(splices.tensors[payload], *copied,
                    copiedFrom->written.payloadOffsets[payload], splices.payloads[payload].length,
                    target, offset, tempPath);
            return writer.copyPayload(
                splices.tensors[payload], target, offset, tempPath, countProgress);
        },
        &model.leftOut());
    if (!written)
        return written.error();
    auto identity = identityOf(fd);
    if (!identity)
        return Error{tempPath.string() + ": " + identity.error().message, identity.error().kind};
    return ModelTemp{std::move(*temp), std::move(*written), *identity};
}

std::vector<std::pair<onnx::TensorProto*, FileRange>> payloadRanges(
    const Splices& splices, const ModelTemp& committed)
{
    std::vector<std::pair<onnx::TensorProto*, FileRange>> ranges;
    for (size_t i = 0; i < splices.payloads.size(); ++i)
        ranges.emplace_back(splices.payloads[i].tensor,
            FileRange{committed.written.payloadOffsets[i], splices.payloads[i].length});
    return ranges;
}

} // namespace repack
