#include "folder_inspect.h"
#include "folder_listing.h"

#include "core/file_names.h"
#include "core/format.h"
#include "core/model/model.h"
#include "core/paths.h"
#include "core/plan/dedupe.h"
#include "folder_scan.h"

#include <algorithm>
#include <map>
#include <set>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace repack {

Result<std::vector<std::string>> modelsInFolder(const fs::path& dir)
{
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return Error::notFound(dir.string() + ": not a folder");
    const FolderListing listing = listFolder(dir, isModelName);
    if (listing.error)
        return Error::io(dir.string() + ": cannot list the folder: " + listing.error.message());
    std::vector<std::string> names;
    for (const ListedFile& file : listing.files)
        if (isFolderModel(file.name, file.regular))
            names.push_back(file.name);
    return names;
}

bool escapesAsWritten(const std::string& location)
{
    const fs::path written(location);
    const fs::path normal = written.lexically_normal();
    return written.is_absolute() || normal.empty() || *normal.begin() == "..";
}

namespace {

// A folder on this machine: its files as the loaders find them.
class LocalFolder final : public FolderAccess {
public:
    explicit LocalFolder(const fs::path& dir)
        : m_dir(dir)
    {
    }
    std::string name() const override { return m_dir.string(); }
    fs::path localPath() const override { return m_dir; }
    Result<std::vector<std::string>> models() override { return modelsInFolder(m_dir); }
    Result<std::unique_ptr<Model>> open(const std::string& name) override
    {
        return Model::load(m_dir / name);
    }
    DataPathFacts facts(const std::string& modelName, const std::string& location) const override
    {
        DataPathFacts f;
        const fs::path written(location);
        f.escapesAsWritten = escapesAsWritten(location);
        const fs::path joined = m_dir / written;
        struct stat st { };
        if (::lstat(joined.c_str(), &st) == 0)
            f.symlink = S_ISLNK(st.st_mode);
        if (::stat(joined.c_str(), &st) == 0) {
            f.exists = true;
            f.hardLinks = static_cast<uint64_t>(st.st_nlink);
        }
        const fs::path data = resolvedName(joined);
        f.inFolder = !written.is_absolute() && isUnder(data, resolvedName(m_dir));
        f.besideRealModel = !written.is_absolute()
            && isUnder(data, resolvedName(m_dir / modelName).parent_path());
        return f;
    }
    std::optional<uint64_t> size(const std::string& location) const override
    {
        std::error_code ec;
        const auto bytes = fs::file_size(m_dir / location, ec);
        if (ec)
            return std::nullopt;
        return bytes;
    }
    // The scan of the first model's folders (it finds the other readers itself).
    FolderReport housekeeping(const Model& model, const std::set<std::string>&) override
    {
        FolderReport report = scanFolder(model);
        for (auto* entries : {&report.unusedData, &report.leftovers})
            for (FolderEntry& e : *entries)
                e.path = relative(e.path);
        for (fs::path& p : report.unreadable)
            p = relative(p);
        return report;
    }

private:
    fs::path relative(const fs::path& path) const
    {
        const fs::path r = path.lexically_relative(m_dir);
        return r.empty() ? path : r;
    }

    const fs::path m_dir;
};

std::string joinNames(const std::vector<std::string>& names)
{
    std::string out;
    for (size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    return out;
}

class Inspector {
public:
    Inspector(FolderAccess& folder, FolderInspection& out)
        : m_folder(folder)
        , m_out(out)
    {
    }

    void addModel(const std::string& name)
    {
        FolderModel entry;
        entry.name = name;
        auto loaded = m_folder.open(name);
        if (!loaded) {
            problem(Severity::Error, name, code::ModelUnreadable,
                name + " does not load: " + loaded.error().message);
            m_out.models.push_back(std::move(entry));
            return;
        }
        std::shared_ptr<const Model> model = std::move(*loaded);
        entry.model = model;
        entry.tensors = model->tensors().size();
        std::set<std::string> files;
        for (const TensorInfo& t : model->tensors()) {
            (t.isExternal() ? entry.externalBytes : entry.inlineBytes) += t.byteSize();
            if (t.isExternal() && t.external->hasLocation())
                files.insert(t.external->location());
        }
        for (const std::string& location : files) {
            const std::string shown = shownLocation(location);
            entry.files.push_back(shown);
            m_users[shown].push_back(name);
            checkLoaders(name, location, entry.loaders);
        }
        std::sort(entry.files.begin(), entry.files.end());
        for (const Problem& p : model->problems()) // its own: broken references, names
            m_out.problems.push_back({p.severity, name, p.tensor, p.code, p.message});
        m_out.models.push_back(std::move(entry));
    }

    // The folder's housekeeping, once for the folders the first readable model's scan covers.
    void addHousekeeping()
    {
        auto first = std::find_if(m_out.models.begin(), m_out.models.end(),
            [](const FolderModel& m) { return m.model != nullptr; });
        if (first == m_out.models.end())
            return;
        std::set<std::string> used;
        for (const auto& [location, users] : m_users)
            used.insert(location);
        const FolderReport report = m_folder.housekeeping(*first->model, used);
        for (const FolderEntry& e : report.unusedData) {
            const std::string shown = e.path.string();
            m_users.try_emplace(shown);
            problem(Severity::Warning, "", code::UnusedDataFile,
                shown + " (" + formatBytes(e.bytes)
                    + ") is read by no model of the folder; remove it, or `onnx-repack clean "
                      "MODEL` does");
        }
        for (const FolderEntry& e : report.leftovers)
            problem(Severity::Warning, "", code::LeftoverTemporary,
                e.path.string() + " (" + formatBytes(e.bytes)
                    + ") is left over from a save that stopped; `onnx-repack clean MODEL` "
                      "removes it");
        for (const fs::path& p : report.unreadable)
            problem(Severity::Warning, "", code::UnreadableSibling,
                p.string()
                    + " could not be read: no file of the folder is called unused or left over");
    }

    void addFiles()
    {
        for (auto& [location, users] : m_users) {
            FolderFile file{location, m_folder.size(location).value_or(0), users};
            std::sort(file.usedBy.begin(), file.usedBy.end());
            m_out.files.push_back(std::move(file));
        }
    }

    Status addShared(const FolderInspectOptions& options)
    {
        std::vector<const Model*> models;
        std::vector<size_t> modelEntry; // position in m_out.models of each of `models`
        for (size_t m = 0; m < m_out.models.size(); ++m)
            if (m_out.models[m].model) {
                models.push_back(m_out.models[m].model.get());
                modelEntry.push_back(m);
            }
        std::vector<TensorRef> candidates;
        for (size_t m = 0; m < models.size(); ++m)
            for (size_t i = 0; i < models[m]->tensors().size(); ++i)
                if (models[m]->tensors()[i].byteSize() >= kSharedMinBytes)
                    candidates.push_back({m, i});
        auto groups = findIdenticalAcross(models, candidates, options.progress, options.cancel);
        if (!groups)
            return groups.error();
        for (const IdenticalAcross& group : *groups) {
            const TensorRef first = group.tensors.front();
            SharedContent content{
                models[first.model]->tensors()[first.tensor].byteSize(), group.copies, {}};
            for (TensorRef ref : group.tensors) {
                const TensorInfo& t = models[ref.model]->tensors()[ref.tensor];
                content.tensors.push_back(
                    {m_out.models[modelEntry[ref.model]].name, t.scope, t.name});
            }
            m_out.duplicatedBytes += content.bytes * (content.copies - 1);
            m_out.shared.push_back(std::move(content));
        }
        std::stable_sort(m_out.shared.begin(), m_out.shared.end(),
            [](const SharedContent& a, const SharedContent& b) {
                return a.bytes * (a.copies - 1) > b.bytes * (b.copies - 1);
            });
        if (m_out.duplicatedBytes > 0) {
            size_t groupsStoredTwice = 0;
            for (const SharedContent& c : m_out.shared)
                groupsStoredTwice += c.copies > 1;
            problem(Severity::Warning, "", code::DuplicatedContent,
                formatBytes(m_out.duplicatedBytes)
                    + " of the folder are copies: " + std::to_string(groupsStoredTwice)
                    + " weight(s) are stored more than once across its models; graphs that "
                      "read one shared data file can hold each of them once");
        }
        return {};
    }

private:
    // A location as the folder listing shows it: relative to the folder when it lies inside.
    std::string shownLocation(const std::string& location) const
    {
        return escapesAsWritten(location) ? location
                                          : fs::path(location).lexically_normal().string();
    }

    void checkLoaders(const std::string& model, const std::string& location, LoaderVerdicts& v)
    {
        const DataPathFacts f = m_folder.facts(model, location);
        const std::string file = "'" + location + "'";
        if (f.symlink) {
            v.onnx = false;
            problem(Severity::Warning, model, code::LoaderSymlinkedData,
                "onnx >= 1.21 refuses " + model + ": its data file " + file
                    + " is a symbolic link; replace the link with a copy of the file it leads "
                      "to, or repack the model into another folder");
        }
        if (f.hardLinks > 1) {
            v.onnx = v.onnxIr = false;
            // A save killed between linking its data to the final name and renaming the model
            // leaves the model naming the temporary, a second name of the final file.
            const bool interrupted = isTempName(fs::path(location).filename().string());
            problem(Severity::Warning, model, code::LoaderHardLinkedData,
                "onnx >= 1.21 and onnx_ir refuse " + model + ": its data file " + file + " has "
                    + std::to_string(f.hardLinks) + " hard links; "
                    + (interrupted ? "a save was interrupted after its commit: onnx-repack clean "
                                + m_folder.name() + " finishes it (or says why it cannot)"
                                   : std::string("make it a file of its own (copy it over "
                                                 "itself), or repack the model")));
        }
        std::vector<std::string> refusing;
        if (!f.inFolder) {
            v.onnx = false;
            refusing.push_back("onnx >= 1.21");
        }
        if (!f.exists || !(f.inFolder || f.besideRealModel)) {
            v.onnxRuntime = false;
            refusing.push_back("ONNX Runtime >= 1.24.2");
        }
        if (f.escapesAsWritten || !f.inFolder) {
            v.onnxIr = false;
            refusing.push_back("onnx_ir");
        }
        if (!refusing.empty() && f.exists)
            problem(Severity::Warning, model, code::LoaderDataOutside,
                joinNames(refusing) + " refuse " + model + ": its data file " + file
                    + " lies outside the model's folder"
                    + (f.besideRealModel ? " (beside the file the model's link leads to)" : "")
                    + "; repack the model to keep its data in its folder");
    }

    void problem(
        Severity severity, const std::string& model, std::string_view code, std::string message)
    {
        m_out.problems.push_back({severity, model, "", std::string(code), std::move(message)});
    }

    FolderAccess& m_folder;
    FolderInspection& m_out;
    std::map<std::string, std::vector<std::string>> m_users; // location -> models
};

} // namespace

std::unique_ptr<FolderAccess> localFolder(const fs::path& dir)
{
    return std::make_unique<LocalFolder>(dir);
}

Result<FolderInspection> inspectFolder(const fs::path& dir, const FolderInspectOptions& options)
{
    LocalFolder folder(dir);
    return inspectFolder(folder, options);
}

Result<FolderInspection> inspectFolder(FolderAccess& folder, const FolderInspectOptions& options)
{
    auto names = folder.models();
    if (!names)
        return names.error();
    FolderInspection out;
    out.folder = folder.name();
    Inspector inspector(folder, out);
    for (const std::string& name : *names)
        inspector.addModel(name);
    inspector.addHousekeeping();
    inspector.addFiles();
    if (Status s = inspector.addShared(options); !s)
        return s.error();
    return out;
}

std::string sharedDataFileOf(const FolderInspection& folder)
{
    std::string shared;
    for (const FolderModel& m : folder.models) {
        if (!m.model)
            return {};
        if (m.files.empty())
            continue; // every tensor inline: reads no file
        if (m.files.size() != 1 || (!shared.empty() && m.files.front() != shared))
            return {};
        shared = m.files.front();
    }
    return shared;
}

} // namespace repack
