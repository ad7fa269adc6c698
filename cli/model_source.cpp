#include "model_source.h"

#include "core/io/source_spec.h"

#ifdef REPACK_HAVE_REMOTE
#include "core/remote/http_source.h"
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
        if (spec->isFolder())
            return Error::usage(spec->display()
                + ": a folder on a web server cannot be listed; "
                  "name the .onnx file");
        auto source = HttpSource::open(spec->url);
        if (!source)
            return source.error();
        const SourceSpec model = *spec;
        return Model::openRemote(
            *source, [model](const std::string& location) -> Result<std::shared_ptr<ByteSource>> {
                auto sibling = siblingSource(model, location);
                if (!sibling)
                    return sibling.error();
                auto opened = HttpSource::open(sibling->url);
                if (!opened)
                    return opened.error();
                return std::shared_ptr<ByteSource>(*opened);
            });
#else
        return Error::usage(spec->display()
            + ": this build reads local files only (built "
              "without REPACK_REMOTE)");
#endif
    }
    case SourceSpec::Kind::Hub:
    case SourceSpec::Kind::S3:
        return Error::usage(spec->display()
            + ": the Hub (hf://) and S3 (s3://) are not served "
              "yet; give the file's https:// address");
    }
    return Error::internal("openModelArgument: unknown kind");
}

} // namespace repack::cli
