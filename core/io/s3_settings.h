// Where an S3 object is and how requests for it are signed, from the environment and
// the AWS shared credentials file as the AWS tools read them. Text in, values out: the requests
// themselves are the transport's (libcurl signs them: CURLOPT_AWS_SIGV4).
#pragma once

#include "environment.h"
#include "source_spec.h"

#include <optional>
#include <string>

namespace repack {

struct S3Settings {
    // AWS_ENDPOINT_URL_S3 > AWS_ENDPOINT_URL (an S3-compatible server, addressed path-style),
    // else AWS itself (no trailing '/').
    std::string endpoint;
    bool custom = false; // an endpoint was given: BUCKET is the path's first part
    std::string region; // AWS_REGION > AWS_DEFAULT_REGION > us-east-1
    // AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN), else the profile
    // (AWS_PROFILE, else "default") of AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials;
    // none: requests go unsigned (a public bucket).
    std::optional<std::string> accessKey;
    std::optional<std::string> secretKey;
    std::optional<std::string> sessionToken;

    bool signs() const { return accessKey && secretKey; }
    // libcurl's CURLOPT_AWS_SIGV4 for these settings: "aws:amz:REGION:s3".
    std::string sigV4() const { return "aws:amz:" + region + ":s3"; }
};
S3Settings s3Settings(const Environment& env);

// The URL of `spec`'s object (an S3 spec): the key percent-encoded part by part, as it is signed.
// A bucket with a '.' is addressed path-style on AWS too (its name breaks the TLS certificate).
std::string s3ObjectUrl(const S3Settings& s3, const SourceSpec& spec);

} // namespace repack
