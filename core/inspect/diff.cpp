#include "diff.h"

#include "core/mapped_memory.h"
#include "core/model/data_file.h"
#include "core/model/model.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace repack {
namespace {

constexpr size_t kCompareChunk = 16u << 20; // progress and cancel between chunks this big

bool sameExternalPlace(const TensorInfo& a, const TensorInfo& b)
{
    return a.external->location() == b.external->location()
        && a.external->offset == b.external->offset;
}

// Both tensors are the same byte range of the same file, as both models opened it: equal
// without reading. The source's identity tells the file apart from a copy or a replacement at
// the same name: a local file's path, device, inode, size and mtime; a remote file's address and
// version (its ETag), never its size alone (two files on servers may well be as long).
bool sameFileRange(const TensorInfo& a, const TensorInfo& b)
{
    if (!a.isExternal() || !b.isExternal() || !a.external->file() || !b.external->file())
        return false;
    return a.external->file()->source().identity() == b.external->file()->source().identity()
        && a.external->offset == b.external->offset && a.bytes && a.bytes == b.bytes;
}

bool sameShape(const TensorInfo& a, const TensorInfo& b)
{
    return a.dataType == b.dataType && a.shape == b.shape && a.bytes == b.bytes;
}

ChangeKind placeKind(const TensorInfo& a, const TensorInfo& b)
{
    if (a.isExternal() != b.isExternal())
        return a.isExternal() ? ChangeKind::ToInline : ChangeKind::ToExternal;
    if (a.isExternal() && !sameExternalPlace(a, b))
        return ChangeKind::Moved;
    return ChangeKind::Unchanged;
}

// Compares the bytes of a.tensors()[ia] and b.tensors()[ib] chunk by chunk, adding to `done`.
Result<bool> sameBytes(const Model& a, size_t ia, const Model& b, size_t ib,
    const DiffOptions& options, Progress& progress)
{
    auto ba = a.read(ia);
    if (!ba)
        return ba.error();
    auto bb = b.read(ib);
    if (!bb)
        return bb.error();
    const auto va = ba->bytes();
    const auto vb = bb->bytes();
    if (va.size() != vb.size())
        return false;
    for (size_t at = 0; at < va.size(); at += kCompareChunk) {
        if (options.cancel && options.cancel->isCancelled())
            return Error{"cancelled", ErrorKind::Cancelled};
        const size_t n = std::min(kCompareChunk, va.size() - at);
        bool equal = false;
        if (Status s = readMapped(ba->where(a.tensors()[ia]) + " or " + bb->where(b.tensors()[ib]),
                [&] { equal = std::memcmp(va.data() + at, vb.data() + at, n) == 0; });
            !s)
            return s.error();
        progress.bytesDone += n;
        if (options.progress)
            options.progress(progress);
        if (!equal)
            return false;
    }
    return true;
}

} // namespace

Result<std::vector<DiffEntry>> diffModels(
    const Model& a, const Model& b, const DiffOptions& options)
{
    const auto& ta = a.tensors();
    const auto& tb = b.tensors();
    std::unordered_map<std::string, size_t> inB;
    inB.reserve(tb.size());
    for (size_t i = 0; i < tb.size(); ++i)
        inB.emplace(tb[i].qualifiedName(), i);
    std::vector<bool> matched(tb.size(), false);
    std::vector<DiffEntry> out;
    out.reserve(ta.size());
    std::vector<size_t> toRead; // entries whose bytes must be compared
    Progress progress;
    for (size_t i = 0; i < ta.size(); ++i) {
        DiffEntry entry{ChangeKind::Removed, ta[i].scope, ta[i].name, static_cast<int>(i), -1};
        auto it = inB.find(ta[i].qualifiedName());
        if (it != inB.end() && !matched[it->second]) {
            const size_t j = it->second;
            matched[j] = true;
            entry.b = static_cast<int>(j);
            if (!sameShape(ta[i], tb[j])) {
                entry.kind = ChangeKind::ContentChanged;
            } else {
                entry.kind = placeKind(ta[i], tb[j]);
                if (options.compareContent && !sameFileRange(ta[i], tb[j])) {
                    toRead.push_back(out.size());
                    progress.bytesTotal += ta[i].byteSize();
                }
            }
        }
        out.push_back(std::move(entry));
    }
    for (size_t e : toRead) {
        if (options.cancel && options.cancel->isCancelled())
            return Error{"cancelled", ErrorKind::Cancelled};
        DiffEntry& entry = out[e];
        progress.tensor = entry.name;
        auto same = sameBytes(
            a, static_cast<size_t>(entry.a), b, static_cast<size_t>(entry.b), options, progress);
        if (!same)
            return same.error();
        if (!*same)
            entry.kind = ChangeKind::ContentChanged;
    }
    for (size_t j = 0; j < tb.size(); ++j)
        if (!matched[j])
            out.push_back({ChangeKind::Added, tb[j].scope, tb[j].name, -1, static_cast<int>(j)});
    return out;
}

} // namespace repack
