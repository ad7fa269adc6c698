// The steps save() and the external-data operations share: writing a plan's data files into
// temporaries beside their destinations, and swapping them in atomically.
#pragma once

#include "core/file_identity.h"
#include "core/model/tensor_info.h"
#include "core/plan/save_plan.h"
#include "core/result.h"
#include "model_writer.h"
#include "temp_file.h"

#include <filesystem>
#include <optional>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace repack {

class DataWriter;
class Model;

struct DataTarget {
    size_t file = 0; // in the plan's files
    // What the model names: folder / data file name. A symlink there is replaced by the new
    // regular file, never written through: its target (a cache blob) stays untouched.
    std::filesystem::path finalPath;
    TempFile temp; // the new bytes, synced and closed
};

// Creates a temporary for `finalPath` that takes over the permission bits (and, where allowed,
// the group) of the file it will replace.
Result<TempFile> createReplacementFor(const std::filesystem::path& finalPath);

// Writes every data file of `plan` (names relative to `dir`) but the `kept` ones (parallel to
// plan.files; empty: none) into a temporary beside it and syncs the temporaries' folders; each
// temporary is registered with `cleanup`.
Result<std::vector<DataTarget>> writeDataTemps(const SavePlan& plan,
    const std::filesystem::path& dir, DataWriter& writer, TempCleanup& cleanup,
    const std::vector<bool>& kept = {});

// Makes `target.finalPath` hold the new bytes with one atomic rename, keeping the temporary
// valid under its own name too (a hard link is renamed, not the temporary). Fails, with the
// final name untouched, where hard links are not supported.
Status swapIn(const DataTarget& target);

// rename(2), honouring the fault point `faultPoint` (may be null).
Status renameFile(
    const std::filesystem::path& from, const std::filesystem::path& to, const char* faultPoint);
// fsync of a folder after the commit point, honouring the fault point "fsync-dir".
Status syncFolder(const std::filesystem::path& dir);

// The paths through which `model` reads files that the targets are about to replace.
std::vector<std::filesystem::path> readsReplacedBy(
    const Model& model, const std::vector<DataTarget>& targets);

// The tensors whose raw_data the model writer copies from a file: payloads left in the .onnx
// that stay inline, and external data coming back inline (TensorRewrite::Inline::Spliced).
struct Splices {
    std::vector<SplicedPayload> payloads;
    std::vector<size_t> tensors; // index in the model of each payload
};
Splices splicesOf(const Model& model, const SavePlan& plan, const DataWriter& writer);

// A model file written by a save, and where its spliced payloads lie in it.
struct ModelTemp {
    TempFile file;
    WrittenModel written;
    FileIdentity identity;
};

// Writes `model` to a new temporary for `modelPath`, registered with `cleanup`; the spliced
// payloads are copied by `writer` (progress counted when `countProgress`) from their sources,
// or, given `copiedFrom` (a model temporary written with the same splices), from there: a remote
// model's payloads are fetched once for both of a save's model files.
Result<ModelTemp> writeModelTemp(Model& model, const std::filesystem::path& modelPath,
    const Splices& splices, DataWriter& writer, bool countProgress, TempCleanup& cleanup,
    const ModelTemp* copiedFrom = nullptr);

// Where the spliced payloads now lie in the committed model file `committed`.
std::vector<std::pair<onnx::TensorProto*, FileRange>> payloadRanges(
    const Splices& splices, const ModelTemp& committed);

} // namespace repack
