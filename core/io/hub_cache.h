// What the environment says of the Hugging Face Hub, read as huggingface_hub reads
// it, and the files its cache already holds: a Hub model whose files were downloaded before is
// read from disk, not fetched again. The cache is only ever read.
//
// Cache layout (huggingface_hub): HUB/models--ORG--REPO/refs/REV holds a commit's 40 hex
// digits; snapshots/COMMIT/PATH is a symlink into blobs/, one file per content.
#pragma once

#include "environment.h"
#include "source_spec.h"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace repack {

struct HubSettings {
    std::string endpoint; // HF_ENDPOINT, else https://huggingface.co (no trailing '/')
    std::filesystem::path cache; // HF_HUB_CACHE > HUGGINGFACE_HUB_CACHE > HF_HOME/hub > ...
    std::optional<std::string> token; // HF_TOKEN > HUGGING_FACE_HUB_TOKEN > the token file
    bool offline = false; // HF_HUB_OFFLINE: never ask the Hub
};
HubSettings hubSettings(const Environment& env);

// The commit `spec` names: its revision when that is 40 hex digits, else the one the cache's
// refs/REV recorded at the last download (what an offline read uses).
std::optional<std::string> cachedCommit(const std::filesystem::path& cache, const SourceSpec& spec);

// The cached copy of `spec`'s file at `commit`: a regular file (through the cache's symlinks)
// inside the repository's cache folder, or nothing.
std::optional<std::filesystem::path> cachedFile(
    const std::filesystem::path& cache, const SourceSpec& spec, const std::string& commit);

// Whether `text` is a commit's 40 lower-case hex digits.
bool isCommit(std::string_view text);

} // namespace repack
