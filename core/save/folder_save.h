// The graphs of a folder saved as one unit (SPEC 9, `repack DIR -o OUT --shared-data NAME`):
// every graph reads one shared data file that holds each distinct content (dtype, shape and
// bytes) once, the same weight of three graphs or twice in one graph being one range.
//
// The protocol extends the one-model save (docs/save-protocol.md) to the set, with S the shared
// file, Ts its temporary and, per graph i, Mi its model:
//   1. write Ts (each content once) and sync;
//   2. per graph, write two model temporaries, one naming Ts, one naming S, and sync them;
//   3. rename each first temporary over its Mi: graph by graph, each commits on its own and
//      reads the complete Ts; the graphs not yet renamed still read their old files, untouched;
//   4. link Ts to a temporary name and rename that over S;
//   5. rename each second temporary over its Mi (Mi -> S);   6. unlink Ts;
//   7. remove the data files the graphs read before and no model of the folder reads now.
// At every instant each graph is a complete model (old or new layout) for every reader, and a
// file is replaced or removed only after no graph of the set reads it.
#pragma once

#include "core/inspect/plan_diff.h"
#include "core/plan/save_options.h"
#include "core/plan/save_request.h"
#include "core/result.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace repack {

class FolderAccess;

// The phases a shared save reports through SaveControls::progress (Progress::phase): the
// contents compared byte for byte, then the shared data file written.
inline constexpr std::string_view kPhaseComparing = "comparing";
inline constexpr std::string_view kPhaseWriting = "writing";

struct FolderSaveOptions {
    // The layout of every graph's tensors (threshold, alignment, align threshold, order,
    // attributes, checksum). With a shared data file, what one file for every graph cannot
    // honour is refused, never quietly changed: another format, every tensor inline, shards,
    // placements of single tensors, keeping placement, another data file name.
    LayoutOptions layout;
    // Consent (force), allowCorrupt, rewrite, the lock wait, progress and cancel.
    SaveControls controls;
    // Relative to the output folder; empty: each graph is saved on its own, with its own data
    // file, the layout options applied to each (a single-model save per graph).
    std::string sharedData;
    std::vector<std::string> models; // file names in the folder; empty: every *.onnx there
    // Without a shared file: the request as the user gave it, applied to each graph's own output
    // path (a target names each graph's data file after it); `layout` and `controls` then only
    // give progress and cancel.
    std::optional<SaveRequest> perGraphRequest = std::nullopt;
    // Plan only (`plan DIR`): the report of what the save would write and remove, with nothing
    // locked, created or written.
    bool dryRun = false;
    // With dryRun (`plan DIR --diff`): what the save changes in each graph, in the report.
    bool diffs = false;
};

struct FolderSaveReport {
    std::filesystem::path folder; // the output folder
    std::vector<std::string> models; // saved, in name order
    std::filesystem::path sharedData;
    uint64_t sharedBytes = 0; // size of the shared data file
    uint64_t externalBytes = 0; // of the external tensors of every graph, each counted
    uint64_t bytesBefore = 0; // the graphs' models and data files before (each file once)
    uint64_t bytesAfter = 0; // the graphs' models and the shared file after (a dry run counts
                             // the models as they are now)
    size_t externalTensors = 0;
    size_t sharedRanges = 0; // distinct contents in the shared file
    bool unchanged = false; // nothing written: every graph already is what it would be
    std::vector<std::filesystem::path> removed; // old data files no model reads any more
    // A dry run's: why the save would need consent (--force), empty when it would not.
    std::string consentNeeded;
    std::vector<std::string> warnings; // after the commit: the save stands, a step did not
    double seconds = 0;
    // FolderSaveOptions::diffs: each graph's layout now against its place in the shared file,
    // parallel to `models`.
    std::vector<PlanDiff> diffs;
};

// Saves the graphs of `dir` into `outDir` (which may be `dir`: in place) with one shared data
// file. Fails, changing nothing, on a graph that does not load or has bytes it cannot carry
// forward (unless controls.allowCorrupt), a layout the shared file cannot honour, an unusable or
// aliasing data file name (a folder, a model of the set), a shared file past the 2 GiB protobuf
// limit for an inline result, a file replaced that a model outside the set reads from any folder
// it could name it from (ConsentNeeded, naming every such file and model, unless
// controls.force), a source that changed while it was copied (Changed), a full disk or a cancel.
Result<FolderSaveReport> saveFolder(const std::filesystem::path& dir,
    const std::filesystem::path& outDir, const FolderSaveOptions& options);

// The same save of any folder of graphs (core/inspect/folder_inspect.h): a local one, or a folder
// of a Hub repository (core/remote/model_source.h: openFolderArgument), every graph read at its
// one pinned commit. A remote folder is never saved in place nor into the Hugging Face cache
// (usage errors: `outDir` is a local folder elsewhere) and nothing of it is removed; a file that
// changes on the server during the save fails it (Changed) with nothing left at `outDir`.
Result<FolderSaveReport> saveFolder(
    FolderAccess& folder, const std::filesystem::path& outDir, const FolderSaveOptions& options);

// What both folder saves name a folder by in their messages: its normal path, or its address.
std::string shownName(const FolderAccess& folder);
// The graphs of `folder` a save takes: `wanted` (each one of its models), or every model; sorted,
// each once. A usage error naming a name that is not a model of it, or when there is none.
Result<std::vector<std::string>> chosenModels(
    FolderAccess& folder, const std::vector<std::string>& wanted);

} // namespace repack
