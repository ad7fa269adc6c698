// Reading and validating a tensor's external_data entries (SPEC section 3). Nothing here
// reads weight bytes: paths are resolved and checked with lstat/stat only.
#pragma once

#include "core/problem.h"
#include "core/result.h"
#include "data_file.h"
#include "tensor_info.h"

#include <array>
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

// The shared locations of one model's external tensors: one DataLocation per location text and
// outcome (unresolved; resolved to a path, without a file; with its file), built when first
// asked for and handed to every tensor after, as long as the path and file asked for agree.
class DataLocations {
public:
    Shared<DataLocation> get(std::string_view location, const std::filesystem::path& resolved = {},
        const std::shared_ptr<DataFile>& file = {});

private:
    using Outcomes = std::array<Shared<DataLocation>, 3>;
    std::map<std::string, Outcomes, std::less<>> m_byLocation;
    Outcomes* m_last = nullptr; // most tensors name the location the one before named
};

// Fills info.external from the tensor's key/value entries: location (shared through
// `locations`), offset, length, checksum (basepath is accepted and ignored; other keys are warned
// about). Reports malformed values.
void parseExternalKeys(TensorInfo& info, const ExternalEntries& keys, DataLocations& locations,
    std::vector<Problem>& problems);

// A path that many results hold (one per data file): one allocation for all of them, and one
// address to tell the file by. Reads as a std::filesystem::path (empty when none was set).
class SharedPath {
public:
    SharedPath() = default;
    SharedPath(std::filesystem::path path)
        : m_path(std::make_shared<const std::filesystem::path>(std::move(path)))
    {
    }
    const std::filesystem::path& get() const { return m_path ? *m_path : none(); }
    operator const std::filesystem::path&() const { return get(); }
    bool empty() const { return get().empty(); }
    std::string string() const { return get().string(); }
    void clear() { m_path.reset(); }
    bool operator==(const SharedPath& other) const { return get() == other.get(); }

private:
    static const std::filesystem::path& none()
    {
        static const std::filesystem::path none;
        return none;
    }
    std::shared_ptr<const std::filesystem::path> m_path;
};

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
// Opens the data file `location` names beside a model that is not a local file, its
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
// tensor's size, and attaches the shared DataFile from `openFile` when all is well (the shared
// location from `locations`).
void resolveExternal(TensorInfo& info, LocationResolver& resolver,
    const std::function<std::shared_ptr<DataFile>(
        const std::filesystem::path&, const FileIdentity&)>& openFile,
    DataLocations& locations, std::vector<Problem>& problems);

} // namespace repack
