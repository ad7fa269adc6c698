// A folder of graphs saved graph by graph, without a shared data file (`repack DIR -o OUT`
// without --shared-data): each graph is a single-model save (save.h) with its own data file,
// every graph loaded, planned and asked about before the first one is written.
#pragma once

#include "folder_save.h"

namespace repack {

// saveFolder without FolderSaveOptions::sharedData.
Result<FolderSaveReport> saveEachGraph(
    FolderAccess& folder, const std::filesystem::path& outDir, const FolderSaveOptions& options);

} // namespace repack
