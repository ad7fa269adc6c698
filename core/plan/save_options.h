// What a save should produce: where tensors go, how data files are laid out, and the
// per-tensor plan a GUI builds by dragging tensors between inline and external storage.
#pragma once

#include "core/progress.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace repack {

enum class TensorOrder { Declaration, SizeAscending };

// The largest offset alignment a save accepts (SPEC 5a); larger ones only make sparse files.
inline constexpr uint64_t kMaxAlignment = 16u << 20;
// The one rule for an offset alignment, checked by the plan, the CLI and the bindings alike.
inline constexpr std::string_view kAlignmentRule = "must be 0 or a power of two up to 16 MiB";
inline constexpr bool validAlignment(uint64_t alignment)
{
    return alignment == 0 || (alignment <= kMaxAlignment && (alignment & (alignment - 1)) == 0);
}

// A save's offset alignment unless told otherwise (SPEC 5), and what a file's padding is counted
// against when nothing else is known (core/plan/file_layout.h).
inline constexpr uint64_t kDefaultAlignment = 4096;

// An offset alignment and the tensors it applies to: those of at least `threshold` bytes start at
// a multiple of `alignment` (0: dense).
struct Alignment {
    uint64_t alignment = kDefaultAlignment;
    uint64_t threshold = 1 << 20;
};

// The offset a tensor of `length` bytes gets when its file so far ends at `end`: the one
// placement rule. Plans lay files out by it, and a file's layout counts as padding only the
// bytes it asks for (core/plan/file_layout.h).
inline constexpr uint64_t placedOffset(uint64_t end, uint64_t length, Alignment a)
{
    if (a.alignment == 0 || length < a.threshold)
        return end;
    return (end + a.alignment - 1) / a.alignment * a.alignment;
}

// How the shards of a data file split by `SaveOptions::shardSize` are named.
enum class ShardNaming {
    Numbered, // onnx_ir's "stem-00001-of-00003.ext" (SPEC 5a; file_names.h)
    Chunks, // transformers.js: "name", "name_1", "name_2", ... (core/plan/targets.h)
};

// What the data files a save writes are. Safetensors: each data file is at the same time a
// .safetensors file (core/model/safetensors.h): a header first, tensors back to back (the format
// has no gaps, so alignment does not apply), no shared ranges.
enum class DataFormat { Raw, Safetensors };

// One tensor's destination. Auto follows the threshold rule of SPEC section 5.
enum class Placement { Auto, Inline, External };

// A pinned destination (SPEC 5b): Inline, or External into `location` (a data file name
// relative to the model's folder; empty = the save's data file, sharded like unpinned tensors).
struct TensorPlacement {
    Placement kind = Placement::Auto;
    std::string location;
    // Keeping placement (SaveOptions::keepPlacement): the offset the tensor has now, kept
    // where the file's layout allows it (ranges in order, not overlapping); else laid out anew.
    std::optional<uint64_t> offset;
    TensorPlacement() = default;
    TensorPlacement(Placement k, std::string where = {}, std::optional<uint64_t> at = {})
        : kind(k)
        , location(std::move(where))
        , offset(at)
    {
    }
    bool operator==(const TensorPlacement&) const = default;
};

// What a save writes: where tensors go and how data files are laid out.
struct LayoutOptions {
    // Data file path relative to the output model's folder; empty: "<model file name>" plus
    // dataSuffix, or plus ".data" when that is empty too.
    std::string dataFile;
    std::string dataSuffix; // a target's, e.g. "_data" (core/plan/targets.h)
    uint64_t threshold = 1024; // external iff byte size >= threshold
    uint64_t alignment = kDefaultAlignment; // offset alignment for large tensors; 0 = dense
    uint64_t alignThreshold = 1 << 20; // tensors of at least this many bytes are aligned
    Alignment alignmentRule() const { return {alignment, alignThreshold}; }
    TensorOrder order = TensorOrder::Declaration;
    bool includeAttributes = true; // attribute tensors may go external too
    bool allInline = false; // bring every tensor inline (fails past 2 GiB)
    uint64_t shardSize = 0; // maximum bytes per data file; 0 = a single file
    ShardNaming shardNaming = ShardNaming::Numbered;
    // The shard size is a reader's hard limit (a browser's ArrayBuffer): a tensor larger than it
    // fails the plan instead of getting a shard of its own.
    bool shardSizeIsLimit = false;
    size_t maxShards = 0; // a plan needing more shards fails (a reader's limit); 0 = no limit
    // Tensors with identical dtype, shape and bytes are stored once, their external entries
    // pointing at the same range (core/plan/dedupe.h). Planning then reads the candidates' bytes.
    bool dedupe = false;
    DataFormat format = DataFormat::Raw;
    bool checksum = false; // write a SHA-1 "checksum" key per external tensor
    std::vector<TensorPlacement> placements; // per index of Model::tensors(); empty = all Auto
    // Every tensor stays where it is (onnx_ir's ir.save without external_data): inline stays
    // inline, an external tensor stays in the data file of its location, at its offset where
    // it can (core/plan/save_plan.h: keptPlacements); the threshold is not used, the data file
    // only by pins that name none. Pinned entries of `placements` (not Auto: the desktop app's
    // pins) go where they say, after the kept ranges of their file, laid out with the alignment
    // above; one pinned to the file it is in stays. Pins that move a tensor of a model reading
    // a safetensors file are refused: kept at its offsets, the file would lose its header. An
    // in-place save of an unchanged model then writes nothing.
    bool keepPlacement = false;
    // Keeping placement: the data files (relative to the model's folder, as its locations spell
    // them, "./w.bin" being "w.bin") to compact: their own tensors are laid out again in the order
    // of their offsets, back to back with the alignment above, closing the ranges no tensor reads
    // (orphaned, core/plan/file_layout.h) that tensors moved out of them leave. Every other
    // file keeps its offsets (and, when its bytes do not change, is not written: keptDataFiles).
    // A name the model reads no data file under, or a safetensors file (its header would be
    // lost), is refused. Without keepPlacement a save lays every file out anew: nothing to do.
    std::vector<std::string> compactFiles;
    // The option a user gives a data file with ("--data", "external_data="), for the message
    // of a kept inline model past protobuf's 2 GiB.
    std::string dataOptionName = "--data";
};

// How a save runs: what it may replace or carry forward, how long it waits, progress and cancel.
struct SaveControls {
    bool force = false; // may replace files other models use, or that no model uses
    // Carry forward bytes that fail validation (a checksum mismatch, inline data whose size
    // disagrees with dtype x shape) as they are, keeping their old checksum as evidence.
    bool allowCorrupt = false;
    // After an in-place save, delete data files the model no longer uses (only those no other
    // model reads, from any folder it could name them from: core/inspect/readers.h).
    bool removeUnused = false;
    // How long to wait for another save of the same folder to finish (SPEC 5a: one save at a
    // time) before failing with a clear message.
    int lockWaitMs = 30000;
    // Write even when an in-place save would change nothing (planKeepsLayout): by default such
    // a save writes nothing and says so.
    bool rewrite = false;

    ProgressCallback progress;
    const CancelToken* cancel = nullptr;
};

struct SaveOptions : LayoutOptions, SaveControls {
    SaveOptions() = default;
    SaveOptions(LayoutOptions layout, SaveControls controls)
        : LayoutOptions(std::move(layout))
        , SaveControls(std::move(controls))
    {
    }
    const LayoutOptions& layout() const { return *this; }
    const SaveControls& controls() const { return *this; }
};

} // namespace repack
