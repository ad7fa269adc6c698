// Paths compared as names: whether one lies in a folder, and what a name resolves to. One place
// for the containment checks of external data (core/model/external_reference.cpp), the
// loaders' verdicts (core/inspect/folder_inspect.cpp), the folder scan and the folder save.
#pragma once

#include <filesystem>

namespace repack {

// Whether `path` is `dir` or lies in it, component by component (both absolute and normal, or
// both canonical; a trailing separator of `dir` is ignored). No file system access.
bool isUnder(const std::filesystem::path& path, const std::filesystem::path& dir);

// `path` with every symlink resolved as far as it exists (weakly_canonical), or lexically
// normal when that fails: for comparing names, not files.
std::filesystem::path resolvedName(const std::filesystem::path& path);

// `path` absolute and lexically normal, without the trailing separator "dir/" or "dir/." leaves:
// one spelling of a folder (or file) for comparing and listing. Never throws.
std::filesystem::path normalFolder(const std::filesystem::path& path);

} // namespace repack
