#include "model_sources.h"

#include "model.h"

#include <set>
#include <variant>

namespace repack {

std::vector<const DataFile*> sourceFilesOf(const Model& model)
{
    std::vector<const DataFile*> files;
    if (model.inFileSource())
        files.push_back(model.inFileSource());
    std::set<const DataFile*> seen(files.begin(), files.end()); // thousands of tensors share one
    for (const TensorInfo& t : model.tensors())
        if (t.isExternal() && t.external->file() && seen.insert(t.external->file().get()).second)
            files.push_back(t.external->file().get());
    return files;
}

std::vector<SourceVersion> remoteVersionsOf(const Model& model)
{
    std::vector<SourceVersion> versions;
    for (const DataFile* file : sourceFilesOf(model)) {
        if (file->isLocal())
            continue;
        const SourceIdentity& identity = file->source().identity();
        const auto* version = std::get_if<std::string>(&identity.version);
        versions.push_back({identity.origin, version ? *version : std::string(), identity.size});
    }
    return versions;
}

std::string versionsText(const std::vector<SourceVersion>& versions)
{
    std::string text;
    for (const SourceVersion& source : versions)
        text += (text.empty() ? "" : ", ") + source.name + " ("
            + (source.version.empty() ? "" : source.version + ", ") + std::to_string(source.bytes)
            + " bytes)";
    return text;
}

} // namespace repack
