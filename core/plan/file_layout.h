// How each external data file is used: which byte ranges hold tensors, which are alignment
// padding, which no tensor references (orphaned) and where tensors overlap. Computed from the
// index and file sizes alone; no data is read.
#pragma once

#include "save_options.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace repack {

class Model;
struct SavePlan;

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
    uint64_t alignment = 0; // what its gaps were counted against
    std::vector<Region> regions; // sorted by offset; overlaps listed after the tensors
};

// What computeLayout lists of each file: its regions, or only its byte counts (what reports
// of a 100,000-tensor model need, without a region per tensor kept).
enum class LayoutDetail { Regions, Totals };

// One entry per data file that a validly resolved external tensor references, ordered by
// location. A safetensors file's header is a Header region. Tensors at exactly the same range share
// it; any other overlap is an Overlap. Of a gap before a tensor, the bytes `alignment` asks for
// (the gap's first bytes, up to the next multiple of it: placedOffset with every tensor aligned,
// since writers differ in which tensors they align) are padding; every other byte no tensor
// reads is orphaned, however the next offset happens to be aligned. A tensor at an offset that
// is no multiple of `alignment` (a file written with a smaller one) has its padding counted by
// the largest power of two its offset is a multiple of. The offsets alone cannot tell padding
// from orphaned bytes: `alignment` is the one the file was written with when the caller knows
// it, else the one it would save with (0: every gap is orphaned). With LayoutDetail::Totals,
// `regions` is left empty.
std::vector<FileLayout> computeLayout(
    const Model& model, uint64_t alignment, LayoutDetail detail = LayoutDetail::Regions);

// The layout of one data file of `bytes` bytes, its first `headerBytes` a header, holding
// `tensors` (Tensor regions, in any order), its gaps told apart as computeLayout does: what a
// planned file will be. `location` and `path` are left empty.
FileLayout layoutOfRanges(
    uint64_t bytes, uint64_t headerBytes, std::vector<Region> tensors, uint64_t alignment);

// `layout` (with its regions) counted again against `alignment`: its tensors' ranges laid out
// as layoutOfRanges lays them, without the model. What a view does when the alignment its user
// would save with changes.
FileLayout recountedLayout(const FileLayout& layout, uint64_t alignment);

// Data file `file` of `plan` as it will be: its tensors' ranges (Region::tensor the index into
// plan.tensors), its safetensors header, and its gaps told apart as computeLayout tells them
// (padding, or orphaned: a range a tensor moved out of while the others kept their place).
FileLayout plannedLayout(const SavePlan& plan, size_t file);
// The alignment padding of every data file of `plan`, counted as plannedLayout counts it: a
// file kept with a range a tensor moved out of has that range orphaned, not padding.
uint64_t paddingBytes(const SavePlan& plan);

} // namespace repack
