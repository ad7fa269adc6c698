#include "hub_folder.h"
#include "http_source.h"
#include "hub_client.h"

#include "core/file_names.h"
#include "core/inspect/folder_listing.h"
#include "core/io/tensor_bytes.h"
#include "core/model/model.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace fs = std::filesystem;

namespace repack {
namespace {

// The listing's version of a file, as HubClient names what it opens: its content tag (the LFS
// sha256, else the git blob id the Hub sends as ETag).
std::string listedVersion(const HubTreeEntry& entry)
{
    return "etag " + (entry.lfsSha256.empty() ? entry.oid : entry.lfsSha256);
}

// Whether `source` (opened by HubClient: "etag TAG", or "blob TAG" from the HF cache) is the
// file `entry` lists.
bool isListed(const ByteSource& source, const HubTreeEntry& entry)
{
    const auto* version = std::get_if<std::string>(&source.identity().version);
    return version && source.identity().size == entry.size
        && version->substr(version->find(' ') + 1) == listedVersion(entry).substr(5);
}

// What the folder's models share, kept by their sibling openers (a model of the report outlives
// the listing): the client pinned once, and the listing.
struct ListedFolder {
    std::shared_ptr<HubClient> client;
    std::mutex clientMutex; // one request at a time on the client's connection
    SourceSpec folder; // hf://ORG/REPO[@REV]/DIR/
    std::map<std::string, HubTreeEntry> files; // by path in the repository
    std::string firstModel; // its path, opened by the pin
    std::shared_ptr<ByteSource> firstSource;
    const CancelToken* cancel = nullptr; // the inspection's, while it runs

    // A file of the folder, at the pinned commit; `with` null: the inspection's token.
    Result<std::shared_ptr<ByteSource>> open(
        const SourceSpec& file, FileRole role, const CancelToken* with = nullptr)
    {
        std::lock_guard lock(clientMutex);
        if (file.file == firstModel && firstSource)
            return firstSource;
        return client->open(file, with ? with : cancel, role);
    }
};

// A data file of the folder: sized from the listing, opened (resolved, then asked by its
// HEAD) at the first read of its bytes.
class ListedSource final : public ByteSource {
public:
    ListedSource(std::shared_ptr<ListedFolder> folder, SourceSpec spec, const HubTreeEntry& entry)
        : m_folder(std::move(folder))
        , m_spec(std::move(spec))
        , m_identity{m_folder->client->nameOf(m_spec), listedVersion(entry), entry.size}
    {
    }
    const SourceIdentity& identity() const override { return m_identity; }
    std::string displayName() const override { return m_identity.origin; }
    Result<TensorBytes> read(uint64_t offset, uint64_t length, const CancelToken* cancel) override
    {
        auto source = opened(cancel);
        if (!source)
            return source.error();
        return (*source)->read(offset, length, cancel);
    }
    Status readInto(uint64_t offset, std::span<std::byte> into, const CancelToken* cancel) override
    {
        auto source = opened(cancel);
        if (!source)
            return source.error();
        return (*source)->readInto(offset, into, cancel);
    }
    // Never opened, none of its bytes was read: there is nothing to check.
    Status revalidate(const CancelToken* cancel) const override
    {
        auto source = inner();
        return source ? source->revalidate(cancel) : Status{};
    }
    void releasePages(uint64_t offset, uint64_t length) const override
    {
        if (auto source = inner())
            source->releasePages(offset, length);
    }
    void releaseView(std::span<const std::byte> bytes) const override
    {
        if (auto source = inner())
            source->releaseView(bytes);
    }

private:
    std::shared_ptr<ByteSource> inner() const
    {
        std::lock_guard lock(m_mutex);
        return m_inner;
    }
    Result<std::shared_ptr<ByteSource>> opened(const CancelToken* cancel)
    {
        std::lock_guard lock(m_mutex);
        if (m_inner)
            return m_inner;
        auto source = m_folder->open(m_spec, FileRole::Data, cancel);
        if (!source)
            return source.error();
        if ((*source)->identity().size != m_identity.size)
            return Error::changed(m_identity.origin + ": the Hub listed "
                + std::to_string(m_identity.size) + " bytes, the file at the commit has "
                + std::to_string((*source)->identity().size));
        m_inner = *source;
        return m_inner;
    }

    const std::shared_ptr<ListedFolder> m_folder;
    const SourceSpec m_spec;
    const SourceIdentity m_identity;
    mutable std::mutex m_mutex;
    std::shared_ptr<ByteSource> m_inner;
};

class HubFolder final : public FolderAccess {
public:
    explicit HubFolder(std::shared_ptr<ListedFolder> listed)
        : m_listed(std::move(listed))
    {
    }
    // The models outlive the folder (a report keeps them), its user's cancel token does not.
    ~HubFolder() override
    {
        std::lock_guard lock(m_listed->clientMutex);
        m_listed->cancel = nullptr;
    }
    std::string name() const override { return m_listed->client->nameOf(m_listed->folder); }
    Result<std::vector<std::string>> models() override { return modelsOf(*m_listed); }
    Result<std::unique_ptr<Model>> open(const std::string& name) override
    {
        return openRemoteModel(fileSpec(name),
            [listed = m_listed](const SourceSpec& file, FileRole role,
                const CancelToken* stop) -> Result<std::shared_ptr<ByteSource>> {
                const auto entry = listed->files.find(file.file);
                if (role == FileRole::Data && entry != listed->files.end())
                    return std::shared_ptr<ByteSource>(
                        std::make_shared<ListedSource>(listed, file, entry->second));
                return listed->open(file, role, stop); // a model, or what the Hub says
            });
    }
    // A file of the Hub is a file of its own: no link, no second name.
    DataPathFacts facts(const std::string&, const std::string& location) const override
    {
        DataPathFacts f;
        f.escapesAsWritten = escapesAsWritten(location);
        f.inFolder = f.besideRealModel = !f.escapesAsWritten;
        f.exists = f.escapesAsWritten || m_listed->files.count(repositoryPath(location));
        return f;
    }
    std::optional<uint64_t> size(const std::string& location) const override
    {
        if (escapesAsWritten(location))
            return std::nullopt;
        const auto entry = m_listed->files.find(repositoryPath(location));
        if (entry == m_listed->files.end())
            return std::nullopt;
        return entry->second.size;
    }
    // As a local scan: the folder and the subfolders of it holding the model's data files; a
    // temporary or a data file there that no model of the folder reads. Nothing is locked on
    // the Hub: a temporary there is a leftover of an upload.
    FolderReport housekeeping(const Model& model, const std::set<std::string>& used) override
    {
        std::vector<std::string> folders{""};
        for (const TensorInfo& t : model.tensors()) {
            if (!t.isExternal() || !t.external->hasLocation()
                || escapesAsWritten(t.external->location()))
                continue;
            const std::string parent
                = fs::path(t.external->location()).lexically_normal().parent_path().string();
            if (!parent.empty()
                && std::find(folders.begin(), folders.end(), parent) == folders.end())
                folders.push_back(parent);
        }
        FolderReport report;
        for (const std::string& folder : folders)
            for (const auto& [path, entry] : m_listed->files) {
                const fs::path relative = path.substr(m_listed->folder.file.size());
                const std::string name = relative.filename().string();
                if (relative.parent_path() != folder || used.count(relative.string()))
                    continue;
                // No links on a server: every temporary's name is a save's temporary.
                if (isSaveTemporary({.name = name, .regular = true}))
                    report.leftovers.push_back({relative, entry.size});
                else if (isDataName(name))
                    report.unusedData.push_back({relative, entry.size});
            }
        return report;
    }

    static std::vector<std::string> modelsOf(const ListedFolder& listed)
    {
        std::vector<std::string> names;
        for (const auto& [path, entry] : listed.files) {
            const std::string name = path.substr(listed.folder.file.size());
            if (isFolderModel(name, true)) // a listing names files only
                names.push_back(name);
        }
        return names; // sorted: the map's order
    }

private:
    std::string repositoryPath(const std::string& location) const
    {
        return m_listed->folder.file + fs::path(location).lexically_normal().string();
    }
    SourceSpec fileSpec(const std::string& name) const
    {
        SourceSpec spec = m_listed->folder;
        spec.file += name;
        return spec;
    }

    std::shared_ptr<ListedFolder> m_listed;
};

// Lists the folder into `listed` (at its pinned commit, else its revision).
Status list(ListedFolder& listed, const CancelToken* cancel)
{
    auto files = listed.client->list(listed.folder, cancel);
    if (!files)
        return files.error();
    listed.files.clear();
    for (HubTreeEntry& entry : *files)
        if (entry.path.starts_with(listed.folder.file))
            listed.files.emplace(entry.path, std::move(entry));
    return {};
}

} // namespace

Result<std::unique_ptr<FolderAccess>> openHubFolder(const SourceSpec& spec,
    const HubSettings& settings, const CancelToken* cancel, BlockCache* cache)
{
    if (spec.kind != SourceSpec::Kind::Hub || !spec.isFolder())
        return Error::usage(spec.display() + ": not a folder of a Hub repository");
    auto listed = std::make_shared<ListedFolder>();
    listed->client = std::make_shared<HubClient>(settings, cache);
    listed->folder = spec;
    listed->cancel = cancel;
    if (isCommit(spec.revision))
        if (Status pinned = listed->client->pin(spec); !pinned)
            return pinned.error();
    if (Status s = list(*listed, cancel); !s)
        return s.error();
    const std::vector<std::string> models = HubFolder::modelsOf(*listed);
    if (listed->client->commit().empty() && !models.empty()) {
        // Pinned by the first model's resolve, which its opening reuses. The listing was of the
        // revision: if that model is not the file listed, the revision moved meanwhile, and the
        // folder is listed again at the commit (every model is read there anyway).
        SourceSpec first = spec;
        first.file += models.front();
        if (Status pinned = listed->client->pin(first, cancel); !pinned)
            return pinned.error();
        auto source = listed->client->open(first, cancel, FileRole::Model);
        if (source) {
            if (!isListed(**source, listed->files.at(first.file)))
                if (Status s = list(*listed, cancel); !s)
                    return s.error();
            listed->firstModel = first.file;
            listed->firstSource = std::move(*source);
        }
    }
    return std::unique_ptr<FolderAccess>(std::make_unique<HubFolder>(listed));
}

} // namespace repack
