#include "verify.h"

#include "core/checksum.h"
#include "core/model/model.h"
#include "core/posix_file.h"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <optional>

namespace repack {
namespace {

struct Range {
    uint64_t offset;
    uint64_t length;
    const TensorInfo* tensor;
};

void problem(
    std::vector<Problem>& out, const TensorInfo& t, std::string_view code, std::string message)
{
    out.push_back({Severity::Error, t.qualifiedName(), std::string(code),
        t.qualifiedName() + ": " + std::move(message)});
}

} // namespace

std::vector<Problem> verify(const Model& model, const VerifyOptions& options)
{
    std::vector<Problem> out = model.problems();

    // Group readable ranges by file and read each file front to back.
    std::map<std::filesystem::path, std::vector<Range>> files;
    uint64_t total = 0;
    for (const auto& t : model.tensors()) {
        if (!t.isExternal() || !t.external->file())
            continue;
        const uint64_t length = t.external->length.value_or(t.byteSize());
        files[t.external->resolvedPath()].push_back({t.external->offset, length, &t});
        total += length;
    }

    AlignedBuffer buffer(std::max<size_t>(options.bufferBytes, 4096));
    Progress progress;
    progress.bytesTotal = total;
    for (auto& [path, ranges] : files) {
        std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.offset < b.offset; });
        // A local file is read by pread from the file validated; a remote one
        // through its source, whose every answer is checked against the version opened.
        DataFile& file = *ranges.front().tensor->external->file();
        std::optional<UniqueFd> fd;
        if (file.isLocal()) {
            auto opened = UniqueFd::openRead(path);
            if (!opened) {
                for (const auto& r : ranges)
                    problem(out, *r.tensor, code::UnreadableFile, opened.error().message);
                continue;
            }
            // Only the file that was validated: another one at that path has other bytes.
            auto identity = identityOf(opened->get());
            if (!identity || !(*identity == file.identity())) {
                for (const auto& r : ranges)
                    problem(out, *r.tensor, code::FileChanged,
                        path.string()
                            + " changed since the model was opened (replaced or modified); "
                              "nothing was read from it");
                continue;
            }
            ::posix_fadvise(opened->get(), 0, 0, POSIX_FADV_SEQUENTIAL);
            fd = std::move(*opened);
        }
        const std::filesystem::path& filePath = path; // a structured binding: not captured
        const auto readAt = [&](std::span<std::byte> into, uint64_t offset) -> Status {
            if (fd)
                return preadExact(fd->get(), into, offset, filePath);
            return file.readInto(offset, into, options.cancel);
        };
        for (const auto& r : ranges) {
            if (options.cancel && options.cancel->isCancelled())
                return out;
            const bool hashing = !r.tensor->external->checksum->empty();
            if (Status s = hashing ? checksumsAvailable() : Status{}; !s) {
                problem(out, *r.tensor, code::ReadFailed,
                    "its checksum cannot be checked: " + s.error().message);
                continue;
            }
            std::optional<Sha1> sha; // libcrypto is loaded for a checksum only
            if (hashing)
                sha.emplace();
            uint64_t done = 0;
            Status status;
            while (done < r.length && status) {
                const size_t chunk
                    = static_cast<size_t>(std::min<uint64_t>(buffer.size(), r.length - done));
                std::span<std::byte> view(buffer.data(), chunk);
                status = readAt(view, r.offset + done);
                if (status && sha)
                    sha->update(view);
                done += chunk;
                progress.bytesDone += chunk;
                progress.tensor = r.tensor->name;
                if (options.progress)
                    options.progress(progress);
            }
            if (!status) {
                problem(out, *r.tensor, code::ReadFailed, status.error().message);
                continue;
            }
            if (sha) {
                const std::string actual = sha->hexDigest();
                if (actual != *r.tensor->external->checksum)
                    problem(out, *r.tensor, code::ChecksumMismatch,
                        "SHA-1 of the bytes is " + actual + ", the checksum key says "
                            + *r.tensor->external->checksum);
            }
        }
    }
    return out;
}

} // namespace repack
