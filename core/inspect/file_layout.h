// How each external data file is used: which byte ranges hold tensors, which are alignment
// padding, which no tensor references (orphaned) and where tensors overlap. Computed from the
// index and file sizes alone; no data is read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace repack {

class Model;

// Header: the JSON header a safetensors data file starts with (core/model/safetensors.h).
enum class RegionType : uint8_t { Tensor, Padding, Orphaned, Overlap, Header };

// 24 bytes: a data file of 100,000 tensors lists as many regions.
struct Region {
    RegionType type = RegionType::Tensor;
    // A Tensor region whose exact range (offset and length) other tensors read too: stored
    // once for several identical tensors (repack --dedupe), not an overlap.
    bool shared = false;
    int32_t tensor = -1; // index into Model::tensors() for Tensor regions
    uint64_t offset = 0;
    uint64_t length = 0;
};

struct FileLayout {
    std::string location; // relative to the base directory, as models spell it
    std::filesystem::path path; // resolved
    uint64_t bytes = 0; // file size
    uint64_t referencedBytes = 0;
    uint64_t paddingBytes = 0;
    uint64_t orphanedBytes = 0;
    uint64_t overlappingBytes = 0; // ranges that partly overlap, never exactly shared ones
    uint64_t sharedBytes = 0; // ranges read by several tensors, each counted once
    uint64_t headerBytes = 0; // a safetensors file's header (its length included); 0: raw data
    std::vector<Region> regions; // sorted by offset; overlaps listed after the tensors
};

// What computeLayout lists of each file: its regions, or only its byte counts (what reports
// of a 100,000-tensor model need, without a region per tensor kept).
enum class LayoutDetail { Regions, Totals };

// One entry per data file that a validly resolved external tensor references, ordered by
// location. A safetensors file's header is a Header region. Tensors at exactly the same range share
// it; any other overlap is an Overlap. An unreferenced gap counts as padding when it is shorter
// than the largest power of two (at most 64 KiB) that the next tensor's offset is a multiple of;
// otherwise orphaned. With LayoutDetail::Totals, `regions` is left empty.
std::vector<FileLayout> computeLayout(
    const Model& model, LayoutDetail detail = LayoutDetail::Regions);

// The layout of one data file of `bytes` bytes, its first `headerBytes` a header, holding
// `tensors` (Tensor regions, in any order), its gaps told apart as computeLayout does: what a
// planned file will be (core/inspect/plan_diff.h). `location` and `path` are left empty.
FileLayout layoutOfRanges(uint64_t bytes, uint64_t headerBytes, std::vector<Region> tensors);

} // namespace repack
