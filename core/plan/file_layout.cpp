#include "file_layout.h"

#include "save_plan.h"

#include "core/model/data_file.h"
#include "core/model/model.h"
#include "core/model/safetensors.h"

#include <algorithm>
#include <map>
#include <sys/stat.h>

namespace repack {
namespace {

// The largest power of two `offset` is a multiple of, up to the largest alignment a save may use.
uint64_t alignmentOf(uint64_t offset)
{
    if (offset == 0)
        return kMaxAlignment;
    return std::min(offset & (~offset + 1), kMaxAlignment);
}

// The first bytes of the gap [from, to) before a tensor of `length` bytes at `to` that are
// padding under `alignment`, capped by the largest power of two `to` is a multiple of.
uint64_t paddingBefore(uint64_t from, uint64_t to, uint64_t length, uint64_t alignment)
{
    const Alignment everyTensor{std::min(alignment, alignmentOf(to)), 0};
    return std::min(placedOffset(from, length, everyTensor), to) - from;
}

// A gap's regions (padding, then orphaned bytes) counted in `layout` and handed to `emit`.
// `next` is the tensor after the gap; none after the last one: all orphaned.
template <typename Emit>
void addGap(FileLayout& layout, uint64_t from, uint64_t to, const Region* next, Emit& emit)
{
    if (to <= from)
        return;
    const uint64_t padding = next ? paddingBefore(from, to, next->length, layout.alignment) : 0;
    if (padding) {
        emit(Region{.type = RegionType::Padding, .offset = from, .length = padding});
        layout.paddingBytes += padding;
    }
    if (const uint64_t orphaned = to - from - padding) {
        emit(Region{.type = RegionType::Orphaned, .offset = from + padding, .length = orphaned});
        layout.orphanedBytes += orphaned;
    }
}

bool byRange(const Region& a, const Region& b)
{
    return a.offset != b.offset ? a.offset < b.offset : a.length < b.length;
}

// The file's regions in file order, each handed to `emit` (its overlaps after them), and its
// byte counts added to `layout`. Tensors at the same offset come shortest first; identical
// ranges are neighbours, marked shared. Files written by a save are sorted already: no sort.
template <typename Emit> void sweep(FileLayout& layout, std::vector<Region>& tensors, Emit&& emit)
{
    if (!std::is_sorted(tensors.begin(), tensors.end(), byRange))
        std::sort(tensors.begin(), tensors.end(), byRange);
    for (size_t i = 1; i < tensors.size(); ++i) {
        Region& previous = tensors[i - 1];
        if (tensors[i].offset == previous.offset && tensors[i].length == previous.length) {
            if (!previous.shared)
                layout.sharedBytes += previous.length;
            previous.shared = tensors[i].shared = true;
        }
    }
    // `covered` is the end of the union so far, `overlapEnd` the end of doubly covered.
    uint64_t covered = 0;
    if (layout.headerBytes) {
        emit(Region{.type = RegionType::Header, .offset = 0, .length = layout.headerBytes});
        covered = layout.headerBytes;
    }
    uint64_t overlapEnd = 0;
    std::vector<Region> overlaps;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const Region& r = tensors[i];
        const uint64_t end = r.offset + r.length;
        if (i > 0 && tensors[i - 1].offset == r.offset && tensors[i - 1].length == r.length) {
            emit(r); // another reader of the range just listed
            continue;
        }
        if (r.offset >= covered) {
            addGap(layout, covered, r.offset, &r, emit);
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
                    overlaps.push_back(
                        Region{.type = RegionType::Overlap, .offset = from, .length = to - from});
                overlapEnd = to;
            }
            if (end > covered) {
                layout.referencedBytes += end - covered;
                covered = end;
            }
        }
        emit(r);
    }
    addGap(layout, covered, layout.bytes, nullptr, emit);
    for (const Region& overlap : overlaps)
        emit(overlap);
}

void fillFile(FileLayout& layout, std::vector<Region> tensors, LayoutDetail detail)
{
    if (detail == LayoutDetail::Totals)
        return sweep(layout, tensors, [](const Region&) {});
    layout.regions.reserve(2 * tensors.size() + 2); // each tensor, and a gap before each
    sweep(layout, tensors, [&layout](const Region& r) { layout.regions.push_back(r); });
}

} // namespace

FileLayout layoutOfRanges(
    uint64_t bytes, uint64_t headerBytes, std::vector<Region> tensors, uint64_t alignment)
{
    FileLayout layout;
    layout.bytes = bytes;
    layout.alignment = alignment;
    layout.headerBytes = std::min(headerBytes, bytes);
    fillFile(layout, std::move(tensors), LayoutDetail::Regions);
    return layout;
}

namespace {

struct FileEntry {
    FileLayout layout;
    std::vector<Region> tensors;
    size_t count = 0;
};

// Calls visit(entry, region) for each validly resolved external tensor's range within its
// file (a reference past the end claims only the bytes that exist); a file's entry is made
// and sized on first use.
template <typename Visit>
void forEachRange(
    const Model& model, std::map<std::filesystem::path, FileEntry>& files, Visit&& visit)
{
    const auto& tensors = model.tensors();
    // Tensors of one file share one path object: most need no lookup by path.
    const std::filesystem::path* lastPath = nullptr;
    FileEntry* last = nullptr;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorInfo& t = tensors[i];
        if (!t.isExternal() || t.external->resolvedPath().empty())
            continue;
        if (&t.external->resolvedPath() != lastPath) {
            lastPath = &t.external->resolvedPath();
            last = &files[*lastPath];
        }
        FileLayout& layout = last->layout;
        if (layout.path.empty()) {
            layout.path = t.external->resolvedPath();
            if (model.isRemote()) { // an address, not a path: the location as written, the size
                                    // the server gave when the file was opened
                layout.location = std::filesystem::path(t.external->location())
                                      .lexically_normal()
                                      .generic_string();
                layout.bytes = t.external->file() ? t.external->file()->identity().size : 0;
            } else {
                layout.location = t.external->resolvedPath()
                                      .lexically_relative(model.baseDir())
                                      .generic_string();
                struct stat st { };
                if (::stat(layout.path.c_str(), &st) == 0)
                    layout.bytes = static_cast<uint64_t>(st.st_size);
            }
        }
        if (t.external->file() && t.external->file()->safetensors())
            layout.headerBytes
                = std::min(t.external->file()->safetensors()->dataStart, layout.bytes);
        const uint64_t offset = t.external->offset;
        if (offset >= layout.bytes)
            continue;
        visit(*last,
            Region{.tensor = static_cast<int32_t>(i),
                .offset = offset,
                .length
                = std::min(t.external->length.value_or(t.byteSize()), layout.bytes - offset)});
    }
}

} // namespace

std::vector<FileLayout> computeLayout(const Model& model, uint64_t alignment, LayoutDetail detail)
{
    std::map<std::filesystem::path, FileEntry> files;
    // Counted first: each file's list of tensors is allocated once, at its size.
    forEachRange(model, files, [](FileEntry& entry, const Region&) { ++entry.count; });
    for (auto& [path, entry] : files)
        entry.tensors.reserve(entry.count);
    forEachRange(
        model, files, [](FileEntry& entry, const Region& r) { entry.tensors.push_back(r); });
    std::vector<FileLayout> out;
    out.reserve(files.size());
    for (auto& [path, entry] : files) {
        entry.layout.alignment = alignment;
        fillFile(entry.layout, std::move(entry.tensors), detail);
        out.push_back(std::move(entry.layout));
    }
    std::sort(out.begin(), out.end(),
        [](const FileLayout& a, const FileLayout& b) { return a.location < b.location; });
    return out;
}

FileLayout recountedLayout(const FileLayout& layout, uint64_t alignment)
{
    std::vector<Region> tensors;
    for (const Region& r : layout.regions)
        if (r.type == RegionType::Tensor)
            tensors.push_back(Region{.tensor = r.tensor, .offset = r.offset, .length = r.length});
    FileLayout again
        = layoutOfRanges(layout.bytes, layout.headerBytes, std::move(tensors), alignment);
    again.location = layout.location;
    again.path = layout.path;
    return again;
}

FileLayout plannedLayout(const SavePlan& plan, size_t file)
{
    std::vector<Region> ranges;
    if (file < plan.fileOrder.size()) {
        ranges.reserve(plan.fileOrder[file].size());
        for (size_t i : plan.fileOrder[file])
            ranges.push_back(Region{.tensor = static_cast<int32_t>(i),
                .offset = plan.tensors[i].offset,
                .length = plan.tensors[i].length});
    }
    FileLayout layout = layoutOfRanges(file < plan.fileBytes.size() ? plan.fileBytes[file] : 0,
        file < plan.fileHeaders.size() ? plan.fileHeaders[file].size() : 0, std::move(ranges),
        plan.alignment);
    layout.location = file < plan.files.size() ? plan.files[file] : std::string();
    return layout;
}

uint64_t paddingBytes(const SavePlan& plan)
{
    uint64_t padding = 0;
    for (size_t f = 0; f < plan.files.size(); ++f)
        padding += plannedLayout(plan, f).paddingBytes;
    return padding;
}

} // namespace repack
