// A folder of graphs seen as one unit (SPEC 9, `inspect DIR`): every model in it, every data
// file and the models that read it, the content stored more than once across the graphs, and
// whether each common loader accepts each graph's data paths.
//
// Loader rules, as the loaders enforce them (each verdict is on the path a model names, joined
// to the folder the model is opened from):
//   onnx >= 1.21          the data file is no symbolic link, has one hard link, and its canonical
//                         path lies in the model's folder (canonical too)
//   ONNX Runtime >= 1.24.2  the data file exists and its canonical path lies in the model's
//                         folder, or in the folder of the model file's canonical path (a Hugging
//                         Face cache: both are links into blobs/)
//   onnx_ir               one hard link; the path as written stays in the folder, and so does
//                         its canonical path
// Problems: each model's own (broken references, duplicate names), then these warnings, each
// naming the model, the file and the fix:
//   duplicated-content    tensors of equal dtype, shape and bytes stored more than once across
//                         the folder, with the bytes the extra copies take
//   loader-symlinked-data onnx >= 1.21 refuses a model: a data file is a symbolic link
//   loader-hard-linked-data  onnx >= 1.21 and onnx_ir refuse a model: a data file has more than
//                         one hard link
//   loader-data-outside   the loaders named refuse a model: a data file lies outside its folder
//   leftover-temporary, unused-data-file, unreadable-sibling: the folder's housekeeping, as for
//                         one model (core/inspect/folder_scan.h)
//   model-unreadable      a .onnx of the folder that does not load, with the reason (an error)
// Content is compared for tensors of at least kSharedMinBytes: smaller ones (shape constants,
// scalars) repeat in every graph and cost nothing worth a finding.
#pragma once

#include "core/problem.h"
#include "core/progress.h"
#include "core/result.h"
#include "folder_scan.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace repack {

class Model;

// Which loaders accept a model's data paths (all of them for a model without external data).
struct LoaderVerdicts {
    bool onnx = true; // onnx >= 1.21
    bool onnxRuntime = true; // ONNX Runtime >= 1.24.2
    bool onnxIr = true; // onnx_ir
};

struct FolderModel {
    std::string name; // file name in the folder
    std::shared_ptr<const Model> model; // null when it did not load (a model-unreadable problem)
    size_t tensors = 0;
    uint64_t inlineBytes = 0;
    uint64_t externalBytes = 0;
    std::vector<std::string> files; // the data files it reads, relative to the folder, sorted
    LoaderVerdicts loaders;
};

struct FolderFile {
    std::string location; // relative to the folder (or as a model names it, when outside)
    uint64_t bytes = 0; // 0 when missing
    std::vector<std::string> usedBy; // model names; empty for an unused data file
};

struct SharedTensor {
    std::string model;
    std::string scope;
    std::string name;
};

// One content (dtype, shape and bytes) that more than one tensor of the folder holds.
struct SharedContent {
    uint64_t bytes = 0; // of one copy
    size_t copies = 0; // distinct byte ranges holding it now
    std::vector<SharedTensor> tensors;
};

struct FolderProblem {
    Severity severity = Severity::Warning;
    std::string model; // empty for the folder as a whole
    std::string tensor; // "scope/name", or empty
    std::string code;
    std::string message;
};

struct FolderInspection {
    std::filesystem::path folder;
    std::vector<FolderModel> models; // sorted by name
    std::vector<FolderFile> files; // sorted by location
    std::vector<SharedContent> shared; // largest duplicated bytes first
    uint64_t duplicatedBytes = 0; // every copy beyond the first, summed
    std::vector<FolderProblem> problems;
};

inline constexpr uint64_t kSharedMinBytes = 1024;

struct FolderInspectOptions {
    ProgressCallback progress = {}; // while tensors that may be shared are compared
    const CancelToken* cancel = nullptr;
};

// Where a data file a model of the folder names lies, as the loaders check it.
struct DataPathFacts {
    bool exists = false;
    bool symlink = false;
    uint64_t hardLinks = 1;
    bool escapesAsWritten = false; // absolute, or ".." climbs out of the folder
    bool inFolder = false; // canonical path in the canonical folder
    bool besideRealModel = false; // canonical path in the folder of the model's canonical path
};

// A location that leaves the folder as written: absolute, or ".." climbs out of it.
bool escapesAsWritten(const std::string& location);

// What the folder report and the folder save ask of a folder: a local one (localFolder(dir)), or
// the files of a remote one (core/remote/hub_folder.h: a folder of a Hub repository). The report
// itself, what it says of them, is inspectFolder(FolderAccess&) alone; the save of either is
// saveFolder(FolderAccess&, ...) (core/save/folder_save.h).
class FolderAccess {
public:
    virtual ~FolderAccess() = default;
    // The folder as the report names it.
    virtual std::string name() const = 0;
    // The folder on this disk; empty for a remote one, which is read only (never saved in place).
    virtual std::filesystem::path localPath() const { return {}; }
    // The models directly in the folder (never temporaries of saves), by name, sorted.
    virtual Result<std::vector<std::string>> models() = 0;
    // The model `name` (one of models()), or why it does not load.
    virtual Result<std::unique_ptr<Model>> open(const std::string& name) = 0;
    // Where the data file `location` that `model` names lies.
    virtual DataPathFacts facts(const std::string& model, const std::string& location) const = 0;
    // The size of the file at `location`, relative to the folder; nothing when it is missing.
    virtual std::optional<uint64_t> size(const std::string& location) const = 0;
    // The folder's housekeeping (folder_scan.h) seen from `model`, the first that loaded, with
    // `used` the data files (as shown, relative) every model of the folder reads; paths
    // relative to the folder.
    virtual FolderReport housekeeping(const Model& model, const std::set<std::string>& used) = 0;
};

// The .onnx files directly in `dir` (symlinks to files too, never a save's temporaries), by
// name. Fails when `dir` is no folder (NotFound) or cannot be listed.
Result<std::vector<std::string>> modelsInFolder(const std::filesystem::path& dir);

// The folder `dir` on this disk, its models the .onnx files directly in it (modelsInFolder).
std::unique_ptr<FolderAccess> localFolder(const std::filesystem::path& dir);

// Inspects the .onnx files directly in `dir` (never temporaries of saves). Fails when `dir` is
// no folder or cannot be listed, or when a read of tensor bytes fails; a model that does not
// load is a problem and the rest are still inspected. Reads only tensors whose byte size equals
// another's (same dtype and shape): a folder of unique weights costs no reads.
Result<FolderInspection> inspectFolder(
    const std::filesystem::path& dir, const FolderInspectOptions& options = {});
// The same report of any folder: every model `folder` lists, opened by it.
Result<FolderInspection> inspectFolder(
    FolderAccess& folder, const FolderInspectOptions& options = {});

// The one data file every graph of `folder` that stores tensors externally reads, when each
// reads that file and no other (a folder saved with one shared data file), as the graphs name
// it; empty when they read several or none, or a graph did not load.
std::string sharedDataFileOf(const FolderInspection& folder);

} // namespace repack
