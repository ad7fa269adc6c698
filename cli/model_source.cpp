#include "model_source.h"

#include "core/io/source_spec.h"

#ifdef REPACK_HAVE_REMOTE
#include "core/remote/http_source.h"
#include "core/remote/s3_source.h"
#endif

namespace repack::cli {

bool namesRemoteModel(const std::string& text)
{
    auto spec = parseSource(text);
    return spec && spec->isRemote();
}

Result<std::unique_ptr<Model>> openModelArgument(const std::string& text)
{
    auto spec = parseSource(text);
    if (!spec)
        return spec.error();
    switch (spec->kind) {
    case SourceSpec::Kind::Local:
        return Model::load(spec->path);
    case SourceSpec::Kind::Http:
    case SourceSpec::Kind::S3: {
#ifdef REPACK_HAVE_REMOTE
        if (spec->kind == SourceSpec::Kind::S3)
            return openS3Model(*spec, processEnvironment());
        return openHttpModel(text);
#else
        return Error::usage(spec->display()
            + ": this build reads local files only (built "
              "without REPACK_REMOTE)");
#endif
    }
    case SourceSpec::Kind::Hub:
        return Error::usage(spec->display()
            + ": the Hub (hf://) is not served "
              "yet; give the file's https:// address");
    }
    return Error::internal("openModelArgument: unknown kind");
}

} // namespace repack::cli
