// What every fuzz target shares: a private scratch folder for the files a target writes, and a
// check that aborts (so libFuzzer keeps the input) when a promise of the product is broken.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace repack::fuzz {

// A folder of this process's own under $TMPDIR (default /tmp), removed at exit. Targets that
// need files write them here, so parallel fuzzers and CI jobs never share one.
const std::filesystem::path& scratchDir(std::string_view target);

// Replaces the contents of `path` with `bytes`, keeping its inode (hard links see the bytes).
void writeFile(const std::filesystem::path& path, std::span<const std::byte> bytes);

inline std::span<const std::byte> bytesOf(const uint8_t* data, size_t size)
{
    return {reinterpret_cast<const std::byte*>(data), size};
}

// Aborts with `what` when `ok` is false: a crash libFuzzer reports and minimizes.
void require(bool ok, const std::string& what);

} // namespace repack::fuzz
