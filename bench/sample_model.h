// The small sample model bundled in resources/sample/: one of every storage case the tool
// must show (raw and typed inline, external dense and aligned, float16, a subgraph initializer,
// a Constant attribute tensor, alignment padding and an orphaned range in the data file).
#pragma once

#include "core/result.h"

#include <filesystem>

namespace repack::bench {

// Writes `path` and "<path>.data" beside it. Deterministic: same bytes on every run.
Status writeSampleModel(const std::filesystem::path& path);

} // namespace repack::bench
