#include "model_source.h"

#include "core/io/source_spec.h"

#ifdef REPACK_HAVE_REMOTE
#include "core/remote/http_source.h"
#include "core/remote/hub_client.h"
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
    case SourceSpec::Kind::Http: {
#ifdef REPACK_HAVE_REMOTE
        return openHttpModel(text);
#else
        return Error::usage(spec->display()
            + ": this build reads local files only (built "
              "without REPACK_REMOTE)");
#endif
    }
    case SourceSpec::Kind::Hub: {
#ifdef REPACK_HAVE_REMOTE
        return openHubModel(*spec, hubSettings(processEnvironment()));
#else
        return Error::usage(spec->display()
            + ": this build reads local files only (built "
              "without REPACK_REMOTE)");
#endif
    }
    case SourceSpec::Kind::S3:
        return Error::usage(spec->display()
            + ": the Hub (hf://) and S3 (s3://) are not served "
              "yet; give the file's https:// address");
    }
    return Error::internal("openModelArgument: unknown kind");
}

} // namespace repack::cli
