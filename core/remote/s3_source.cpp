#include "s3_source.h"

#include "http_source.h"

namespace repack {

HttpOptions s3HttpOptions(const S3Settings& s3, const SourceSpec& spec)
{
    HttpOptions options;
    options.name = spec.display();
    if (!s3.signs()) {
        options.refusedHint = "access refused to an unsigned request (no credentials: set "
                              "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)";
        return options;
    }
    // The keys belong to the object's endpoint: a redirect elsewhere is not signed.
    Credential credential;
    credential.origin = urlOrigin(s3ObjectUrl(s3, spec));
    credential.awsSigV4 = Credential::AwsSigV4{s3.sigV4(), *s3.accessKey, *s3.secretKey};
    // libcurl 7.88 does not send the payload's hash itself, which S3 requires of a signed
    // request; a GET has no payload to sign.
    credential.headers.push_back("x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (s3.sessionToken)
        credential.headers.push_back("x-amz-security-token: " + *s3.sessionToken);
    options.credential = std::move(credential);
    options.refusedHint = "the server refused the request's signature or credentials (check "
                          "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, or the "
                          "profile's keys, and that they may read this object)";
    return options;
}

Result<std::unique_ptr<Model>> openS3Model(const SourceSpec& spec, const Environment& env,
    BlockCache* cache, const CancelToken* cancel, const ProgressCallback& progress)
{
    if (spec.kind != SourceSpec::Kind::S3)
        return Error::usage(spec.display() + ": not an s3:// name");
    if (spec.isFolder())
        return Error::usage(
            spec.display() + ": an S3 folder cannot be listed yet; name the .onnx object");
    const S3Settings s3 = s3Settings(env);
    auto open = [s3, cache](const SourceSpec& object, FileRole role,
                    const CancelToken* stop) -> Result<std::shared_ptr<ByteSource>> {
        auto source = HttpSource::open(
            s3ObjectUrl(s3, object), s3HttpOptions(s3, object), stop, cache, role);
        if (!source)
            return source.error();
        return std::shared_ptr<ByteSource>(*source);
    };
    return openRemoteModel(spec, open, cancel, progress);
}

} // namespace repack
