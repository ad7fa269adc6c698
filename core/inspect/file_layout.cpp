#include "file_layout.h"

#include "core/plan/save_options.h"

#include "core/model/data_file.h"
#include "core/model/model.h"
#include "core/model/safetensors.h"

#include <algorithm>
#include <map>
#include <sys/stat.h>

namespace repack {
namespace {

// The alignment an offset satisfies, up to the largest a save may use: a gap shorter than it
// before a tensor is padding, not orphaned bytes.
uint64_t alignmentOf(uint64_t offset)
{
    if (offset == 0)
        return kMaxAlignment;
    return std::min(offset & (~offset + 1), kMaxAlignment);
}

void addGap(FileLayout& layout, uint64_t from, uint64_t to, bool beforeTensor)
{
    if (to <= from)
        return;
    const uint64_t gap = to - from;
    const bool padding = beforeTensor && gap < alignmentOf(to);
    layout.regions.push_back({padding ? RegionType::Padding : RegionType::Orphaned, from, gap});
    (padding ? layout.paddingBytes : layout.orphanedBytes) += gap;
}

void fillFile(FileLayout& layout, std::vector<Region> tensors)
{
    layout.regions.reserve(2 * tensors.size() + 2); // each tensor, and a gap before each
    std::sort(tensors.begin(), tensors.end(), [](const Region& a, const Region& b) {
        return a.offset != b.offset ? a.offset < b.offset : a.length < b.length;
    });
    // Sweep: `covered` is the end of the union so far, `overlapEnd` the end of doubly covered.
    uint64_t covered = 0;
    if (layout.headerBytes) {
        layout.regions.push_back({RegionType::Header, 0, layout.headerBytes});
        covered = layout.headerBytes;
    }
    uint64_t overlapEnd = 0;
    std::vector<Region> overlaps;
    size_t previous = SIZE_MAX; // index in layout.regions of the previous tensor
    for (Region& r : tensors) {
        const uint64_t end = r.offset + r.length;
        if (previous != SIZE_MAX && layout.regions[previous].offset == r.offset
            && layout.regions[previous].length == r.length) {
            if (!layout.regions[previous].shared)
                layout.sharedBytes += r.length;
            layout.regions[previous].shared = r.shared = true;
            layout.regions.push_back(r);
            previous = layout.regions.size() - 1;
            continue;
        }
        if (r.offset >= covered) {
            addGap(layout, covered, r.offset, true);
            layout.referencedBytes += r.length;
            covered = end;
        } else {
            const uint64_t from = std::max(r.offset, overlapEnd);
            const uint64_t to = std::min(end, covered);
            if (to > from) {
                layout.overlappingBytes += to - from;
                if (!overlaps.empty() && overlaps.back().offset + overlaps.back().length == from)
                    overlaps.back().length += to - from;
                else
                    overlaps.push_back({RegionType::Overlap, from, to - from});
                overlapEnd = to;
            }
            if (end > covered) {
                layout.referencedBytes += end - covered;
                covered = end;
            }
        }
        layout.regions.push_back(r);
        previous = layout.regions.size() - 1;
    }
    addGap(layout, covered, layout.bytes, false);
    std::sort(layout.regions.begin(), layout.regions.end(),
        [](const Region& a, const Region& b) { return a.offset < b.offset; });
    layout.regions.insert(layout.regions.end(), overlaps.begin(), overlaps.end());
}

} // namespace

FileLayout layoutOfRanges(uint64_t bytes, uint64_t headerBytes, std::vector<Region> tensors)
{
    FileLayout layout;
    layout.bytes = bytes;
    layout.headerBytes = std::min(headerBytes, bytes);
    fillFile(layout, std::move(tensors));
    return layout;
}

std::vector<FileLayout> computeLayout(const Model& model)
{
    using Entry = std::pair<FileLayout, std::vector<Region>>;
    std::map<std::filesystem::path, Entry> files;
    const auto& tensors = model.tensors();
    // Tensors of one file share one path object: most need no lookup by path.
    const std::filesystem::path* lastPath = nullptr;
    Entry* last = nullptr;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorInfo& t = tensors[i];
        if (!t.isExternal() || t.external->resolvedPath.empty())
            continue;
        if (&t.external->resolvedPath.get() != lastPath) {
            lastPath = &t.external->resolvedPath.get();
            last = &files[*lastPath];
        }
        auto& [layout, regions] = *last;
        if (layout.path.empty()) {
            layout.path = t.external->resolvedPath;
            layout.location = t.external->resolvedPath.get()
                                  .lexically_relative(model.baseDir())
                                  .generic_string();
            struct stat st { };
            if (::stat(layout.path.c_str(), &st) == 0)
                layout.bytes = static_cast<uint64_t>(st.st_size);
        }
        if (t.external->file && t.external->file->safetensors())
            layout.headerBytes = std::min(t.external->file->safetensors()->dataStart, layout.bytes);
        // A reference past the end claims only the bytes that exist.
        const uint64_t offset = t.external->offset;
        if (offset >= layout.bytes)
            continue;
        const uint64_t length
            = std::min(t.external->length.value_or(t.byteSize()), layout.bytes - offset);
        regions.push_back({RegionType::Tensor, offset, length, static_cast<int>(i)});
    }
    std::vector<FileLayout> out;
    out.reserve(files.size());
    for (auto& [path, entry] : files) {
        fillFile(entry.first, std::move(entry.second));
        out.push_back(std::move(entry.first));
    }
    std::sort(out.begin(), out.end(),
        [](const FileLayout& a, const FileLayout& b) { return a.location < b.location; });
    return out;
}

} // namespace repack
