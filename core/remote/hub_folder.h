// A folder of a Hugging Face Hub repository seen as one unit (`inspect
// hf://ORG/REPO[@REV]/DIR`, `repack hf://ORG/REPO[@REV]/DIR -o OUT`): the report `inspect DIR`
// gives of a local folder (core/inspect/folder_inspect.h), made by the same function from the Hub's
// files. The folder is listed once by the Hub's tree API; the revision is pinned once, by the
// resolve of the first model, and every model is read at that commit; a data file is sized from the
// listing and asked of the Hub only when its bytes are read (a folder of unique weights reads none
// of them).
#pragma once

#include "core/inspect/folder_inspect.h"
#include "core/io/block_cache.h"
#include "core/io/hub_cache.h"
#include "core/io/source_spec.h"

namespace repack {

// The folder `spec` names (hf://ORG/REPO[@REV]/DIR/), listed and pinned: its models() and
// open(name) read at the one commit, for its report (inspectFolder) and for a save of the folder
// into a local one (core/save/folder_save.h). `cancel` stops its requests while the folder lives.
Result<std::unique_ptr<FolderAccess>> openHubFolder(const SourceSpec& spec,
    const HubSettings& settings, const CancelToken* cancel = nullptr, BlockCache* cache = nullptr);

} // namespace repack
