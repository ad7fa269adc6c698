// Crash-safe save (SPEC section 5, protocol in docs/save-protocol.md): new data is streamed
// into temporary files beside the target, synced, and swapped in so that at every instant the
// model path opens as the complete old or the complete new model, for any reader.
#pragma once

#include "core/plan/save_options.h"
#include "core/plan/save_plan.h"
#include "core/result.h"

#include <filesystem>
#include <functional>
#include <vector>

namespace repack {

class Model;

struct SaveReport {
    std::filesystem::path modelPath;
    std::vector<std::filesystem::path> dataFiles; // as the saved model names them, shard order
    // Of dataFiles, those not written: their bytes already were what the plan puts there
    // (keptDataFiles), so each keeps its inode, time and readers. All of them when unchanged.
    std::vector<std::filesystem::path> keptFiles;
    uint64_t bytesWritten = 0; // model file plus data files
    uint64_t dataBytes = 0; // the data files' sizes
    uint64_t paddingBytes = 0; // of those, alignment padding (zeros between tensors)
    size_t externalTensors = 0;
    size_t inlineTensors = 0;
    double seconds = 0;
    // Nothing was written: an in-place save whose files already are what it would write
    // (planKeepsLayout, unless SaveOptions::rewrite). bytesWritten is 0.
    bool unchanged = false;
    // Non-empty: the new model was committed and loads, but a step after the commit point
    // failed (a directory sync, a final rename, removing a temporary): "saved with a warning",
    // never "nothing changed". Each names the file and what to do.
    std::vector<std::string> warnings;
    // Data files the model used before an in-place save and no longer does, and of those the
    // ones removed (options.removeUnused; never one another model in the folder references).
    std::vector<std::filesystem::path> noLongerUsed;
    std::vector<std::filesystem::path> removed;
};

// Saves `model` to `path` (which may be its own path) and updates it to the saved layout:
// external tensors point at the new files and offsets, handles into replaced files are
// invalidated. An error means nothing on disk changed and `model` is as before; a report with
// warnings means the new model is on disk and `model` describes it.
Result<SaveReport> save(
    Model& model, const std::filesystem::path& path, const SaveOptions& options);

// Nothing is ever written into the Hugging Face cache: its snapshot files are links
// into blobs other snapshots share, and huggingface_hub trusts them to be what the Hub served. A
// remote model or folder, which may have been read from there, is saved elsewhere: a usage error
// when `dir`, the output's folder, lies in the cache (compared through its links, so a path into
// the cache by another name is refused too).
Status outsideHubCache(const std::filesystem::path& dir);

// How a front end saves a model it read from a path that another save may change meanwhile
// (SPEC 5a): `attempt(again)` saves, after loading the model again when `again` and applying
// the user's request to it anew (a plan is read for the model as it is now). A failure of kind
// Changed is tried again, up to kSaveAttempts tries in all, when `reloadable` (a model given in
// memory has no path to read again); `onRetry` is told before each new try. The one retry of
// the CLI and the Python package; exceptions from `attempt` pass through.
inline constexpr int kSaveAttempts = 4;
using SaveAttempt = std::function<Result<SaveReport>(bool again)>;
Result<SaveReport> saveRetrying(
    const SaveAttempt& attempt, bool reloadable, const std::function<void()>& onRetry = {});

// saveRetrying's loop for any save whose `attempt(again)` returns a Result (a folder save,
// core/save/folder_save.h, reads its folder again on each attempt).
template <typename Attempt>
auto retryWhileChanged(Attempt&& attempt, bool reloadable,
    const std::function<void()>& onRetry = {}) -> decltype(attempt(false))
{
    for (int tries = 1;; ++tries) {
        auto report = attempt(tries > 1);
        if (report || !report.error().is(ErrorKind::Changed) || !reloadable
            || tries == kSaveAttempts)
            return report;
        if (onRetry)
            onRetry();
    }
}

} // namespace repack
