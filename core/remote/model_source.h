// A MODEL argument, as the CLI, the desktop app and the Python package take it: a local path
// or, with remote sources built in, a file on a web server: http(s)://HOST/PATH, a
// file of a Hugging Face Hub repository: hf://ORG/REPO[@REV]/PATH (core/remote/hub_client.h),
// or an S3 object: s3://BUCKET/KEY (core/remote/s3_source.h).
#pragma once

#include "core/inspect/folder_inspect.h"
#include "core/model/model.h"
#include "core/progress.h"
#include "core/result.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace repack {

// Whether `text` names a model that is not a local path.
bool namesRemoteModel(const std::string& text);

// What a MODEL argument may be, for the commands' help.
inline constexpr std::string_view kModelForms
    = "a path, an http(s):// address, hf://ORG/REPO[@REV]/PATH or s3://BUCKET/KEY";

// The model `text` names: Model::load of a path, Model::openRemote of a URL. `cancel` stops the
// opening of a URL within about a second (ErrorKind::Cancelled), `progress` hears the bytes of
// its structure fetched (the desktop app's File > Open URL…); a path's load takes neither.
Result<std::unique_ptr<Model>> openModelArgument(const std::string& text,
    const CancelToken* cancel = nullptr, const ProgressCallback& progress = {});

// Whether `text` names a folder of a Hub repository: hf://ORG/REPO[@REV]/DIR/, or a DIR whose
// last part has no '.' (hf://ORG/REPO/onnx).
bool namesHubFolder(const std::string& text);
// Whether `text` names a folder of graphs: a local folder or a folder of a Hub repository.
bool namesFolderArgument(const std::string& text);
// The folder of graphs `text` names, as `repack DIR` and `save_folder` read it: a local folder,
// or a folder of a Hub repository listed and pinned once (every model read at that commit);
// `cancel` stops the listing and every later request of the folder.
Result<std::unique_ptr<FolderAccess>> openFolderArgument(
    const std::string& text, const CancelToken* cancel = nullptr);
// The report `inspect DIR` gives of a local folder, of that folder (core/remote/hub_folder.h):
// listed once, every model read at one commit.
Result<FolderInspection> inspectRemoteFolder(
    const std::string& text, const FolderInspectOptions& options = {});

} // namespace repack
