#include "model_source.h"

#include "core/io/source_spec.h"

#include <filesystem>

#ifdef REPACK_HAVE_REMOTE
#include "http_source.h"
#include "hub_client.h"
#include "hub_folder.h"
#include "s3_source.h"
#endif

namespace repack {

namespace {

// Why a build without core/remote cannot read `spec`.
[[maybe_unused]] Error localOnly(const SourceSpec& spec)
{
    return Error::usage(
        spec.display() + ": this build reads local files only (built without REPACK_REMOTE)");
}

} // namespace

bool namesRemoteModel(const std::string& text)
{
    auto spec = parseSource(text);
    return spec && spec->isRemote();
}

Result<std::unique_ptr<Model>> openModelArgument(
    const std::string& text, const CancelToken* cancel, const ProgressCallback& progress)
{
    auto spec = parseSource(text);
    if (!spec)
        return spec.error();
    switch (spec->kind) {
    case SourceSpec::Kind::Local:
        return Model::load(spec->path);
    case SourceSpec::Kind::Http:
    case SourceSpec::Kind::S3:
    case SourceSpec::Kind::Hub: {
#ifdef REPACK_HAVE_REMOTE
        if (spec->kind == SourceSpec::Kind::S3)
            return openS3Model(*spec, processEnvironment(), nullptr, cancel, progress);
        if (spec->kind == SourceSpec::Kind::Hub)
            return openHubModel(
                *spec, hubSettings(processEnvironment()), nullptr, cancel, progress);
        return openHttpModel(text, nullptr, cancel, progress);
#else
        (void)cancel;
        (void)progress;
        return localOnly(*spec);
#endif
    }
    }
    return Error::internal("openModelArgument: unknown kind");
}

namespace {

// `spec` with the folder's path ending in '/' (what a folder's name looks like).
[[maybe_unused]] SourceSpec asFolder(SourceSpec spec)
{
    if (!spec.file.empty() && !spec.file.ends_with('/'))
        spec.file += '/';
    return spec;
}

} // namespace

bool namesHubFolder(const std::string& text)
{
    auto spec = parseSource(text);
    if (!spec || spec->kind != SourceSpec::Kind::Hub)
        return false;
    const std::string last = spec->file.substr(spec->file.rfind('/') + 1);
    return spec->isFolder() || last.find('.') == std::string::npos;
}

namespace {

// The folder of a Hub repository `text` names, its path ending in '/'.
Result<SourceSpec> hubFolderOf(const std::string& text)
{
    auto spec = parseSource(text);
    if (!spec)
        return spec.error();
    if (!namesHubFolder(text))
        return Error::usage(spec->display() + ": not a folder of a Hub repository");
    return asFolder(*spec);
}

} // namespace

bool namesFolderArgument(const std::string& text)
{
    std::error_code ec;
    return namesHubFolder(text) || std::filesystem::is_directory(text, ec);
}

namespace {

// The folder of a Hub repository `text` names, listed and pinned (core/remote/hub_folder.h).
Result<std::unique_ptr<FolderAccess>> openHubFolderNamed(
    const std::string& text, const CancelToken* cancel)
{
    auto spec = hubFolderOf(text);
    if (!spec)
        return spec.error();
#ifdef REPACK_HAVE_REMOTE
    return openHubFolder(*spec, hubSettings(processEnvironment()), cancel);
#else
    (void)cancel;
    return localOnly(*spec);
#endif
}

} // namespace

Result<std::unique_ptr<FolderAccess>> openFolderArgument(
    const std::string& text, const CancelToken* cancel)
{
    if (!namesRemoteModel(text))
        return localFolder(text);
    return openHubFolderNamed(text, cancel);
}

Result<FolderInspection> inspectRemoteFolder(
    const std::string& text, const FolderInspectOptions& options)
{
    auto folder = openHubFolderNamed(text, options.cancel);
    if (!folder)
        return folder.error();
    return inspectFolder(**folder, options);
}

} // namespace repack
