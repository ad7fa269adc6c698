// What a folder holds, each name judged by one rule (core/file_names.h says what a name is):
// its models, and the temporaries saves leave. A folder on this disk is listed here; a folder
// on a server (core/remote/hub_folder.cpp) is judged by the same rules over its listing.
#pragma once

#include "core/file_identity.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace repack {

// One name in a folder on this disk.
struct ListedFile {
    std::filesystem::path path = {};
    std::string name; // its name in the folder
    bool symlink = false; // the name itself is a symlink
    bool regular = false; // it leads to a regular file (links followed)
    FileId id = {};
    uint64_t bytes = 0;
};

struct FolderListing {
    std::vector<ListedFile> files; // sorted by name; a dangling link is left out
    // Set when the folder exists but could not be listed, wholly or in part: what it holds, and
    // so who in it reads what, cannot be told. A folder that does not exist, or a file, lists
    // nothing and no error.
    std::error_code error;
};

// The names in the folder `dir` that `wanted` accepts (by name), each looked up (stat) only
// then: a folder of thousands of shards costs no lookup of its shards when models are asked for.
FolderListing listFolder(const std::filesystem::path& dir, bool (*wanted)(const std::string&));

// Whether `name`, relative to a folder listed (local or remote), is one of the folder's models:
// directly in it (no '/'), a model's name (isModelName: *.onnx in any case, never a save's
// temporary), on a regular file (links followed: a folder named *.onnx or a dangling link is
// none).
bool isFolderModel(const std::string& name, bool regular);

// Whether `file` is a save's temporary: a temporary's name (isTempName) on a regular file that
// is no link (a link is the user's, whatever its name). Whether a save that is no longer running
// left it is the caller's to tell: no save holds the folder's lock, no model names it.
bool isSaveTemporary(const ListedFile& file);

} // namespace repack
