// The MODEL argument of the commands that read a model: a local path or, with remote sources
// built in (issue 38), a file on a web server: http(s)://HOST/PATH, or an S3 object:
// s3://BUCKET/KEY. The Hub (hf://) is parsed and refused with a message until it is served.
#pragma once

#include "core/model/model.h"
#include "core/result.h"

#include <memory>
#include <string>

namespace repack::cli {

// Whether `text` names a model that is not a local path.
bool namesRemoteModel(const std::string& text);

// The model `text` names: Model::load of a path, Model::openRemote of a URL.
Result<std::unique_ptr<Model>> openModelArgument(const std::string& text);

} // namespace repack::cli
