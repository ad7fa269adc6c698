// Reading and validating a tensor's external_data entries (SPEC section 3). Nothing here
// reads weight bytes: paths are resolved and checked with lstat/stat only.
#pragma once

#include "problem.h"
#include "result.h"
#include "tensor_info.h"

#include <filesystem>
#include <functional>
#include <vector>

namespace repack {

class DataFile;

// The in-memory marker ONNX Runtime writes for tensors that live at a process address.
inline constexpr std::string_view kOrtMemoryMarker = "*/_ORT_MEM_ADDR_/*";

// Fills info.external from the tensor's key/value entries: location, offset, length, checksum
// (basepath is accepted and ignored; other keys are warned about). Reports malformed values.
void parseExternalKeys(TensorInfo& info, std::vector<Problem>& problems);

// Where a validated location points, or an error problem explaining why it may not be read.
struct ResolvedLocation {
    std::filesystem::path path; // base dir / location, lexically normal
    uint64_t fileSize = 0;
};

// Checks `location` against `baseDir` without following it outside: empty, absolute, `..`
// escaping, symlinks resolving outside both the logical and the real base directory, missing,
// not a regular file. `subject` names the tensor in messages.
Result<ResolvedLocation> resolveLocation(const std::string& location,
                                         const std::filesystem::path& baseDir,
                                         std::string_view* problemCode);

// Resolves info.external against `baseDir`, checks the byte range against the file and the
// tensor's size, and attaches the shared DataFile from `openFile` when all is well.
void resolveExternal(TensorInfo& info, const std::filesystem::path& baseDir,
                     const std::function<std::shared_ptr<DataFile>(const std::filesystem::path&)>&
                         openFile,
                     std::vector<Problem>& problems);

} // namespace repack
