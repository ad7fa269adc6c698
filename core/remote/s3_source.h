// An object in S3 or an S3-compatible server: read as a file on a web server
// (http_source.h) at the object's URL (s3_settings.h), every request signed by libcurl with the
// keys of the environment or the credentials profile (AWS Signature Version 4), unsigned when
// there are none (a public bucket). Messages name it s3://BUCKET/KEY, never a key or secret.
#pragma once

#include "http_transport.h"

#include "core/io/block_cache.h"
#include "core/io/environment.h"
#include "core/io/s3_settings.h"
#include "core/model/model.h"

#include <memory>

namespace repack {

// The transport options that read the object `spec` names as `s3` says.
HttpOptions s3HttpOptions(const S3Settings& s3, const SourceSpec& spec);

// The model at `spec` (s3://BUCKET/KEY) with its data files beside it in the same bucket, every
// source read through `cache` (the process's shared one when null): what `inspect s3://...`
// and `verify s3://...` open.
// `cancel` and `progress` as openRemoteModel's.
Result<std::unique_ptr<Model>> openS3Model(const SourceSpec& spec, const Environment& env,
    BlockCache* cache = nullptr, const CancelToken* cancel = nullptr,
    const ProgressCallback& progress = {});

} // namespace repack
