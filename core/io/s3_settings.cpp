#include "s3_settings.h"

#include <filesystem>
#include <fstream>

namespace repack {

namespace fs = std::filesystem;

namespace {

// The keys of [profile] in an INI file as the AWS tools write it ("key = value" lines).
void readProfile(const fs::path& file, const std::string& profile, S3Settings& s)
{
    std::ifstream in(file);
    std::string line;
    bool inProfile = false;
    while (std::getline(in, line)) {
        line = trimmed(line);
        if (line.empty() || line.front() == '#' || line.front() == ';')
            continue;
        if (line.front() == '[') {
            inProfile = trimmed(line.substr(1, line.find(']') - 1)) == profile;
            continue;
        }
        const size_t eq = line.find('=');
        if (!inProfile || eq == std::string::npos)
            continue;
        const std::string key = trimmed(line.substr(0, eq));
        const std::string value = trimmed(line.substr(eq + 1));
        if (value.empty())
            continue;
        if (key == "aws_access_key_id")
            s.accessKey = value;
        else if (key == "aws_secret_access_key")
            s.secretKey = value;
        else if (key == "aws_session_token")
            s.sessionToken = value;
    }
}

} // namespace

S3Settings s3Settings(const Environment& env)
{
    S3Settings s;
    s.region = setVariable(env, "AWS_REGION")
                   .value_or(setVariable(env, "AWS_DEFAULT_REGION").value_or("us-east-1"));
    if (auto endpoint = setVariable(env, "AWS_ENDPOINT_URL_S3"))
        s.endpoint = *endpoint;
    else if (auto general = setVariable(env, "AWS_ENDPOINT_URL"))
        s.endpoint = *general;
    s.custom = !s.endpoint.empty();
    if (!s.custom)
        s.endpoint = "https://s3." + s.region + ".amazonaws.com";
    while (s.endpoint.ends_with('/'))
        s.endpoint.pop_back();
    auto key = setVariable(env, "AWS_ACCESS_KEY_ID");
    auto secret = setVariable(env, "AWS_SECRET_ACCESS_KEY");
    if (key && secret) {
        s.accessKey = key;
        s.secretKey = secret;
        s.sessionToken = setVariable(env, "AWS_SESSION_TOKEN");
        return s;
    }
    fs::path file;
    if (auto path = setVariable(env, "AWS_SHARED_CREDENTIALS_FILE"))
        file = *path;
    else if (auto home = setVariable(env, "HOME"))
        file = fs::path(*home) / ".aws" / "credentials";
    if (!file.empty())
        readProfile(file, setVariable(env, "AWS_PROFILE").value_or("default"), s);
    return s;
}

std::string s3ObjectUrl(const S3Settings& s3, const SourceSpec& spec)
{
    const std::string key = percentEncode(spec.file);
    if (s3.custom || spec.bucket.find('.') != std::string::npos)
        return s3.endpoint + "/" + spec.bucket + "/" + key;
    const size_t schemeEnd = s3.endpoint.find("://") + 3;
    return s3.endpoint.substr(0, schemeEnd) + spec.bucket + "." + s3.endpoint.substr(schemeEnd)
        + "/" + key;
}

} // namespace repack
