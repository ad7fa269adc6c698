// What a save keeps (SaveOptions::keepPlacement, and the files and layouts already on disk): each
// tensor where it is now, the data files whose bytes would not change, and whether a save would
// write anything at all.
#include "kept_layout.h"

#include "core/file_identity.h"
#include "core/file_names.h"
#include "core/model/model.h"
#include "core/posix_file.h"
#include "save_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unordered_map>

namespace fs = std::filesystem;

namespace repack {
namespace {

// Whether the file at `path` starts with `bytes`.
bool startsWith(const fs::path& path, const std::string& bytes)
{
    auto fd = UniqueFd::openRead(path);
    if (!fd)
        return false;
    std::string head(bytes.size(), '\0');
    return preadExact(
               fd->get(), std::as_writable_bytes(std::span(head.data(), head.size())), 0, path)
        && head == bytes;
}

} // namespace

namespace {

// The data file a kept tensor stays in, spelled once ("./w.bin" is "w.bin"). A save's temporary
// (a model left by a save killed after its commit) stands for its final name when that name is
// free or already the same file (`clean` linked it there): keeping the tensor where it is then
// finishes that save. A final name that is another file, or a model's, is not taken.
std::string keptLocation(const TensorInfo& t)
{
    const fs::path path = fs::path(t.external->location()).lexically_normal();
    const std::string final = finalNameOfTemp(path.filename().string());
    if (final.empty() || classifyFileName(final) == FileType::Model
        || t.external->resolvedPath().empty())
        return path.generic_string();
    const fs::path& resolved = t.external->resolvedPath();
    const auto finalId = fileIdOf(resolved.parent_path() / final);
    if (finalId && finalId != fileIdOf(resolved))
        return path.generic_string();
    return (path.parent_path() / final).generic_string();
}

} // namespace

bool compactsFile(const LayoutOptions& options, const std::string& location)
{
    const fs::path file = fs::path(location).lexically_normal();
    return std::any_of(options.compactFiles.begin(), options.compactFiles.end(),
        [&](const std::string& name) { return fs::path(name).lexically_normal() == file; });
}

std::vector<TensorPlacement> keptPlacements(const Model& model)
{
    std::vector<TensorPlacement> out;
    out.reserve(model.tensors().size());
    for (const TensorInfo& t : model.tensors()) {
        // One that readers need while building the graph comes inline: stored externally it
        // is an error of the model that a save fixes.
        if (t.isExternal() && !t.mustStayInline())
            out.emplace_back(Placement::External, keptLocation(t), t.external->offset);
        else
            out.emplace_back(Placement::Inline);
    }
    return out;
}

namespace {

// The first data file of `model` that is also a safetensors file; null when none is.
const ExternalRef* firstSafetensorsFile(const Model& model)
{
    for (const TensorInfo& t : model.tensors())
        if (t.isExternal() && t.external->file() && t.external->file()->safetensors())
            return &*t.external;
    return nullptr;
}

// Each file to compact is one the model reads (as its kept placements name them), and, saving
// raw data files, not a safetensors file: laid out again, it would lose its header.
Status checkCompactFiles(const Model& model, const SaveOptions& kept)
{
    const auto& tensors = model.tensors();
    for (const std::string& name : kept.compactFiles) {
        const fs::path file = fs::path(name).lexically_normal();
        const TensorInfo* in = nullptr; // a tensor read from it
        std::set<std::string> read; // the data files the model reads, for the message
        for (size_t i = 0; i < tensors.size() && !in; ++i) {
            const TensorPlacement& p = kept.placements[i];
            if (p.kind == Placement::External && fs::path(p.location) == file)
                in = &tensors[i];
            else if (p.kind == Placement::External)
                read.insert("'" + p.location + "'");
        }
        if (!in) {
            std::string files;
            for (const std::string& f : read)
                files += (files.empty() ? "" : ", ") + f;
            return Error::usage("cannot compact '" + name + "': " + model.path().filename().string()
                + " reads no data file of that name ("
                + (files.empty() ? "it reads none" : "it reads " + files) + ")");
        }
        if (kept.format == DataFormat::Raw && in->external->file()
            && in->external->file()->safetensors())
            return Error::usage("cannot compact '" + name
                + "': it is a safetensors file, and laid out again as raw data it would lose its "
                  "header; lay the data files out anew in the safetensors format instead");
    }
    return {};
}

} // namespace

Result<SaveOptions> keptOptions(
    const Model& model, const fs::path& modelPath, const SaveOptions& requested)
{
    SaveOptions kept = requested;
    kept.placements = keptPlacements(model);
    if (Status s = checkCompactFiles(model, kept); !s)
        return s.error();
    const std::string dataFile
        = fs::path(saveDataFile(modelPath, kept)).lexically_normal().generic_string();
    // A pinned tensor goes where its pin says (after the kept ranges of that file); every other
    // one stays. One pinned to the file it is in already (an imported plan names every tensor's
    // file; "the save's data file" may be it) stays at its offset.
    std::optional<size_t> moved;
    for (size_t i = 0; i < std::min(requested.placements.size(), kept.placements.size()); ++i) {
        TensorPlacement pin = requested.placements[i];
        TensorPlacement& place = kept.placements[i];
        if (pin.kind == Placement::Auto)
            continue;
        if (pin.kind == Placement::External) {
            // One spelling per file, as keptPlacements writes them: "./w.bin" is "w.bin".
            pin.location = pin.location.empty()
                ? dataFile
                : fs::path(pin.location).lexically_normal().generic_string();
            if (place.kind == Placement::External && !pin.offset && pin.location == place.location)
                continue;
        }
        if (pin.kind == place.kind && pin.location == place.location)
            continue;
        place = std::move(pin);
        moved = moved.value_or(i);
    }
    // Kept raw data files are written again at their offsets: a safetensors file would lose its
    // header (readers of the format could no longer read it). Its layout is only made anew.
    if (moved && kept.format == DataFormat::Raw)
        if (const ExternalRef* file = firstSafetensorsFile(model))
            return Error::usage("cannot move " + model.tensors()[*moved].qualifiedName()
                + " and keep every other tensor where it is: " + file->location()
                + " is a safetensors file, and keeping its layout would write it again without "
                  "its header; lay the data files out anew in the safetensors format instead");
    return kept;
}

namespace {

// Per file of `plan`: its tensors are exactly those that read one file now, each at its offset
// (no tensor moved into it, out of it or within it). Keeping placement, such a file may stay as
// it is even when longer than its last tensor: those bytes may be another model's (a file the
// graphs of a folder share) and are not this save's to cut.
std::vector<bool> untouchedFiles(const Model& model, const fs::path& dir, const SavePlan& plan)
{
    std::vector<bool> untouched(plan.files.size(), true);
    std::map<FileId, size_t> planned; // the file now at each planned name
    std::vector<std::optional<FileId>> finals(plan.files.size());
    for (size_t f = 0; f < plan.files.size(); ++f)
        if ((finals[f] = fileIdOf((dir / plan.files[f]).lexically_normal())))
            planned.emplace(*finals[f], f);
    const auto& tensors = model.tensors();
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorInfo& t = tensors[i];
        const PlannedTensor& p = plan.tensors[i];
        std::optional<FileId> now;
        if (t.isExternal() && t.external->file())
            now = t.external->file()->identity().id;
        const auto f = static_cast<size_t>(p.file);
        if (p.external && (!now || now != finals[f] || t.external->offset != p.offset))
            untouched[f] = false; // moved into it, or within it
        if (!now)
            continue;
        if (auto it = planned.find(*now); it != planned.end() && (!p.external || f != it->second))
            untouched[it->second] = false; // moved out of it
    }
    return untouched;
}

// Whether a data file of `size` bytes is the size `plan` gives file `f` (see untouchedFiles).
// One to compact is never longer: its bytes past its last tensor are what compacting cuts.
bool sizeKept(const SavePlan& plan, size_t f, uint64_t size, const SaveOptions& options,
    const std::vector<bool>& untouched)
{
    return size == plan.fileBytes[f]
        || (options.keepPlacement && untouched[f] && size > plan.fileBytes[f]
            && !compactsFile(options, plan.files[f]));
}

} // namespace

bool planKeepsLayout(
    const Model& model, const fs::path& modelPath, const SavePlan& plan, const SaveOptions& options)
{
    if (model.path().empty() || fs::absolute(modelPath).lexically_normal() != model.path())
        return false;
    for (const Problem& p : model.problems())
        if (p.code == code::ExternalWithData)
            return false; // a save drops the inline copy
    // The model would be written as it is: every tensor's storage, and its location as spelled.
    const auto& tensors = model.tensors();
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorInfo& t = tensors[i];
        const PlannedTensor& p = plan.tensors[i];
        if (p.external != t.isExternal())
            return false;
        if (p.external
            && fs::path(t.external->location()).lexically_normal()
                != fs::path(plan.files[static_cast<size_t>(p.file)]).lexically_normal())
            return false;
    }
    // And so would every data file.
    const std::vector<bool> kept = keptDataFiles(model, modelPath, plan, options);
    return std::all_of(kept.begin(), kept.end(), [](bool k) { return k; })
        && namesFile(model.path(), model.fileIdentity());
}

std::vector<bool> keptDataFiles(
    const Model& model, const fs::path& modelPath, const SavePlan& plan, const SaveOptions& options)
{
    // A remote model's data files are not on this disk: every one is written.
    if (model.isRemote())
        return std::vector<bool>(plan.files.size(), false);
    const fs::path dir = fs::absolute(modelPath).lexically_normal().parent_path();
    std::vector<bool> kept(plan.files.size(), true);
    std::vector<const DataFile*> read(plan.files.size(), nullptr); // what its tensors read now
    std::vector<fs::path> paths(plan.files.size());
    std::vector<std::optional<FileId>> finals(plan.files.size());
    std::vector<bool> regular(plan.files.size(), false); // not a symlink
    for (size_t f = 0; f < plan.files.size(); ++f) {
        paths[f] = (dir / plan.files[f]).lexically_normal();
        finals[f] = fileIdOf(paths[f]);
        struct stat st { };
        regular[f] = ::lstat(paths[f].c_str(), &st) == 0 && S_ISREG(st.st_mode);
    }
    // The tensor reads it under the planned name itself (a symlink there, such as a model in a
    // download cache, stays as it is: nothing is written through it), or under the name of a
    // save's temporary of it when the name is a regular file (a model an interrupted save left).
    // Never through another link elsewhere: a Save As whose output folder holds a symlink or a
    // hard link to the source file writes a file of its own there.
    auto readsAsNamed = [&](const fs::path& read, size_t f) {
        return read == paths[f]
            || (regular[f] && read.parent_path() == paths[f].parent_path()
                && finalNameOfTemp(read.filename().string()) == paths[f].filename().string());
    };
    const auto& tensors = model.tensors();
    for (size_t i = 0; i < tensors.size(); ++i) {
        const PlannedTensor& p = plan.tensors[i];
        if (!p.external)
            continue;
        const auto f = static_cast<size_t>(p.file);
        if (!kept[f])
            continue;
        const TensorInfo& t = tensors[i];
        const DataFile* file = t.isExternal() ? t.external->file().get() : nullptr;
        kept[f] = file && finals[f] && file->identity().id == *finals[f]
            && readsAsNamed(t.external->resolvedPath(), f) && (!read[f] || read[f] == file)
            && t.external->offset == p.offset
            && t.external->length.value_or(t.byteSize()) == p.length
            && !(options.checksum && t.external->checksum->empty());
        read[f] = file;
    }
    const std::vector<bool> untouched = untouchedFiles(model, dir, plan);
    for (size_t f = 0; f < plan.files.size(); ++f)
        kept[f] = kept[f] && read[f]
            && sizeKept(plan, f, read[f]->identity().size, options, untouched)
            && namesFile(paths[f], read[f]->identity())
            && (plan.fileHeaders[f].empty() || startsWith(read[f]->path(), plan.fileHeaders[f]));
    return kept;
}
} // namespace repack
