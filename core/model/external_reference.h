// Reading and validating a tensor's external_data entries (SPEC section 3). Nothing here
// reads weight bytes: paths are resolved and checked with lstat/stat only.
#pragma once

#include "core/problem.h"
#include "core/result.h"
#include "data_file.h"
#include "tensor_info.h"

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace repack {

// The in-memory marker ONNX Runtime writes for tensors that live at a process address.
inline constexpr std::string_view kOrtMemoryMarker = "*/_ORT_MEM_ADDR_/*";

// A TensorProto's external_data entries (key, value) in order, and whether it also holds data
// inline (raw_data or a typed field).
struct ExternalEntries {
    std::span<const std::pair<std::string_view, std::string_view>> entries;
    bool holdsData = false;
};

// Fills info.external from the tensor's key/value entries: location, offset, length, checksum
// (basepath is accepted and ignored; other keys are warned about). Reports malformed values.
void parseExternalKeys(
    TensorInfo& info, const ExternalEntries& keys, std::vector<Problem>& problems);

// Where a validated location points, or an error problem explaining why it may not be read.
struct ResolvedLocation {
    SharedPath path; // base dir / location, lexically normal
    FileIdentity identity; // of the file the path named when it was checked (with its size)
};

// Resolves locations against one base directory: empty, absolute, `..` escaping, symlinks
// resolving outside the logical and the real base directory (and outside `modelRealDir`, the
// real folder of the model file itself, when given: a Hugging Face cache keeps the model and
// its data as symlinks snapshots/<rev>/x -> ../../blobs/<sha>), missing, not a regular file.
// Results are memoized, since thousands of tensors usually share one file.
// Opens the data file `location` names beside a model that is not a local file (issue 38), its
// text already checked as a local location's: the file's source, or why not.
using SiblingOpener
    = std::function<Result<std::shared_ptr<ByteSource>>(const std::string& location)>;

class LocationResolver {
public:
    explicit LocationResolver(
        const std::filesystem::path& baseDir, const std::filesystem::path& modelRealDir = {});
    // Locations of a remote model: checked as above, then opened by `openSibling`.
    explicit LocationResolver(SiblingOpener openSibling);
    // The source a remote location resolved to, by its resolved path (null for a local one).
    std::shared_ptr<ByteSource> sourceAt(const std::filesystem::path& resolved) const;

    // On failure `problemCode` (when given) receives the problem's code.
    Result<ResolvedLocation> resolve(const std::string& location, std::string_view* problemCode);

private:
    struct Outcome {
        Result<ResolvedLocation> result;
        std::string_view code;
    };
    Outcome resolveUncached(const std::string& location);
    Outcome resolveLocal(const std::filesystem::path& normal) const;
    Outcome resolveRemote(const std::string& location);

    std::filesystem::path m_logicalBase;
    std::filesystem::path m_realBase; // empty when the base directory cannot be resolved
    std::filesystem::path m_modelRealDir; // empty when not given
    std::unordered_map<std::string, Outcome> m_cache;
    SiblingOpener m_openSibling; // set for a remote model
    std::map<std::filesystem::path, std::shared_ptr<ByteSource>> m_sources;
};

// Resolves info.external with `resolver`, checks the byte range against the file and the
// tensor's size, and attaches the shared DataFile from `openFile` when all is well.
void resolveExternal(TensorInfo& info, LocationResolver& resolver,
    const std::function<std::shared_ptr<DataFile>(
        const std::filesystem::path&, const FileIdentity&)>& openFile,
    std::vector<Problem>& problems);

} // namespace repack
