// A folder of a Hugging Face Hub repository seen as one unit (issue 38, `inspect
// hf://ORG/REPO[@REV]/DIR`): the report `inspect DIR` gives of a local folder
// (core/inspect/folder_inspect.h), made by the same function from the Hub's files. The folder is
// listed once by the Hub's tree API; the revision is pinned once, by the resolve of the first
// model, and every model is read at that commit; a data file is sized from the listing and asked
// of the Hub only when its bytes are read (a folder of unique weights reads none of them).
#pragma once

#include "core/inspect/folder_inspect.h"
#include "core/io/block_cache.h"
#include "core/io/hub_cache.h"
#include "core/io/source_spec.h"

namespace repack {

// The report of the folder `spec` names (hf://ORG/REPO[@REV]/DIR/), named by it at the pinned
// commit. A model that does not load is a problem of the report, as in a local folder.
Result<FolderInspection> inspectHubFolder(const SourceSpec& spec, const HubSettings& settings,
    const FolderInspectOptions& options = {}, BlockCache* cache = nullptr);

} // namespace repack
