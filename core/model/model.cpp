// Loading a Model: the .onnx mapped and indexed at the wire level (no protobuf parse), its
// external references resolved and validated, and what a save leaves behind adopted. The protos
// are in model_protos.cpp, reading a tensor's bytes in model_reads.cpp.
#include "model.h"

#include "model_start.h"
#include "structure_image.h"

#include "core/file_names.h"
#include "core/mapped_memory.h"
#include "core/posix_file.h"
#include "external_reference.h"
#include "safetensors.h"
#include "tensor_index.h"

#include <google/protobuf/arena.h>

#include <algorithm>
#include <unordered_set>

namespace fs = std::filesystem;

namespace repack {

Model::~Model() = default;

namespace {

constexpr int kLoadAttempts = 8;

} // namespace

Result<std::unique_ptr<Model>> Model::load(const fs::path& path)
{
    return guardMemory(
        path.string() + ": indexing its tensors", [&] { return loadUnguarded(path, nullptr); });
}

Result<std::unique_ptr<Model>> Model::loadDetached(
    const fs::path& readable, const fs::path& baseDir, PayloadLender lender)
{
    auto model = guardMemory("the model handed over: indexing its tensors",
        [&] { return loadUnguarded(readable, &baseDir); });
    if (model)
        (*model)->m_lender = std::move(lender);
    return model;
}

Result<std::unique_ptr<Model>> Model::openRemote(std::shared_ptr<ByteSource> source,
    SiblingOpener openSibling, const CancelToken* cancel, const ProgressCallback& progress)
{
    const std::string name = source->displayName();
    return guardMemory(name + ": indexing its tensors", [&]() -> Result<std::unique_ptr<Model>> {
        const uint64_t size = source->identity().size;
        if (size == 0)
            return Error::corrupt(name + ": empty file");
        uint64_t fetched = 0;
        auto image = StructureImage::fetch(
            size,
            [&](uint64_t offset, uint64_t length) {
                auto bytes = source->read(offset, length, cancel);
                if (bytes && progress) {
                    fetched += length;
                    progress(Progress{fetched, size, {}, "fetching the structure"});
                }
                return bytes;
            },
            name);
        if (!image)
            return image.error();
        auto shared = std::make_shared<const StructureImage>(std::move(*image));
        const RawPayloadRule inFile
            = [](size_t, FileRange payload) { return std::optional<FileRange>(payload); };
        auto index = indexTensors(shared->bytes(), name, inFile);
        if (!index)
            return index.error();
        if (!index->hasGraph && index->functionCount == 0)
            return notAnOnnxModel(name, "no graph and no functions");
        std::unique_ptr<Model> model(new Model);
        model->m_modelFile
            = std::make_shared<DataFile>(structureBackedSource(shared, std::move(source)));
        model->m_fileBytes = size;
        model->m_openSibling = std::move(openSibling);
        model->m_image = shared;
        model->adoptIndex(std::move(*index));
        model->resolve();
        return model;
    });
}

Result<std::unique_ptr<Model>> Model::loadUnguarded(const fs::path& path, const fs::path* baseDir)
{
    std::error_code ec;
    if (fs::is_directory(path, ec))
        return Error::usage(path.string() + ": is a directory, not an ONNX model file");
    // A save may replace the model and then its data files while we read: data validated
    // after the model file was replaced could be the new data under the old model's offsets.
    // So the model file must still be the one parsed once its data files are validated;
    // otherwise read it again (a save's steps are short).
    Error lastError = Error::internal("not read");
    for (int attempt = 0; attempt < kLoadAttempts; ++attempt) {
        auto fd = UniqueFd::openRead(path);
        if (!fd)
            return fd.error();
        auto identity = identityOf(fd->get());
        if (!identity)
            return Error{path.string() + ": " + identity.error().message, identity.error().kind};
        if (identity->size == 0)
            return Error::corrupt(path.string() + ": empty file");
        const fs::path absolute = fs::absolute(path).lexically_normal();
        // Mapped through the DataFile that later serves the payloads: it is refused if the
        // path no longer names the file opened (a save replaced it meanwhile: read it again).
        auto file = std::make_shared<DataFile>(absolute, *identity);
        auto bytes = file->view(0, identity->size);
        if (!bytes) {
            lastError = bytes.error();
            continue;
        }
        // A file truncated while it is indexed faults (SIGBUS) instead of reading short: that
        // read is abandoned (what the walk had allocated is lost, once) and the load fails.
        Result<TensorIndex> index = Error::internal("not run");
        const RawPayloadRule inFile
            = [](size_t, FileRange payload) { return std::optional<FileRange>(payload); };
        const ReleaseRule release
            = [&file](uint64_t offset, uint64_t length) { file->releasePages(offset, length); };
        if (Status s = readMapped(path.string(),
                [&] {
                    // A file of anything else is refused at its first bytes, not walked.
                    if (Status start = checkModelStart(*bytes, identity->size, path.string());
                        !start)
                        index = start.error();
                    else
                        index = indexTensors(*bytes, path.string(), inFile, release);
                });
            !s)
            return s.error();
        if (!index)
            return index.error();
        if (!index->hasGraph && index->functionCount == 0)
            return notAnOnnxModel(path.string(), "no graph and no functions");
        // The pages the walk touched are not needed until a save parses the file.
        file->releasePages(0, identity->size);

        std::unique_ptr<Model> model(new Model);
        model->m_modelFile = std::move(file);
        model->m_path = absolute;
        model->m_fileBytes = identity->size;
        model->m_fileIdentity = *identity;
        model->m_baseDir
            = baseDir ? fs::absolute(*baseDir).lexically_normal() : model->m_path.parent_path();
        model->adoptIndex(std::move(*index));
        model->resolve();
        if (namesFile(path, *identity)) {
            if (baseDir) { // detached: in memory, as fromProto's (m_modelFile serves payloads)
                model->m_path.clear();
                model->m_fileIdentity = FileIdentity{};
            }
            return model;
        }
        lastError = Error::changed(path.string() + ": replaced while it was read");
    }
    return Error::changed(path.string()
        + ": the file kept changing while it was read (another save?); try again. Last: "
        + lastError.message);
}

std::unique_ptr<Model> Model::fromProto(std::unique_ptr<onnx::ModelProto> proto, fs::path baseDir)
{
    std::unique_ptr<Model> model(new Model);
    model->m_proto.reset(proto.release());
    model->m_baseDir = fs::absolute(baseDir).lexically_normal();
    model->reindex();
    return model;
}

void Model::setBaseDir(fs::path dir)
{
    m_baseDir = fs::absolute(dir).lexically_normal();
    reindex();
}

void Model::setLocation(fs::path path, uint64_t fileBytes)
{
    m_path = fs::absolute(path).lexically_normal();
    m_fileBytes = fileBytes;
    m_baseDir = m_path.parent_path();
    reindex();
}

std::string Model::firstErrorOf(const TensorInfo& tensor) const
{
    const std::string name = tensor.qualifiedName();
    for (const auto& p : m_problems)
        if (p.severity == Severity::Error && p.tensor == name)
            return p.message;
    return {};
}

bool Model::hasErrors() const
{
    return std::any_of(m_problems.begin(), m_problems.end(),
        [](const Problem& p) { return p.severity == Severity::Error; });
}

size_t Model::inFileCount() const
{
    if (m_proto)
        return m_inFile.size();
    return static_cast<size_t>(
        std::count_if(m_tensors.begin(), m_tensors.end(), [](const TensorInfo& t) {
            return t.inlineRange && t.inlineRange->length >= kInFileMinBytes;
        }));
}

void Model::adoptIndex(TensorIndex index)
{
    m_tensors = std::move(index.tensors);
    m_indexProblems = std::move(index.problems);
    m_header = std::move(index.header);
    m_typedSpans.clear();
    for (auto& [tensor, spans] : index.typedSpans)
        m_typedSpans.emplace(tensor, std::move(spans));
}

void Model::reindex()
{
    if (m_proto) {
        // The protos are the model now: index their serialization, whose payloads left in the
        // .onnx are empty (their ranges come from m_inFile). The old index goes first (its data
        // files stay in m_dataFiles): two indexes of a model of millions of tensors at once
        // would double the peak.
        std::vector<TensorInfo>().swap(m_tensors);
        const std::string bytes = serializeWhole();
        if (Status s = indexOwnProtos(std::as_bytes(std::span(bytes.data(), bytes.size())), {}); !s)
            throw std::logic_error(s.error().message);
    }
    resolve();
}

bool Model::reindexFromFile(const fs::path& path, const FileIdentity& identity)
{
    DataFile file(fs::absolute(path).lexically_normal(), identity);
    auto bytes = file.view(0, identity.size);
    if (!bytes)
        return false;
    std::vector<TensorInfo>().swap(m_tensors); // as reindex()
    Status indexed = Error::internal("not run");
    const ReleaseRule release
        = [&file](uint64_t offset, uint64_t length) { file.releasePages(offset, length); };
    if (Status s = readMapped(path.string(), [&] { indexed = indexOwnProtos(*bytes, release); });
        !s || !indexed)
        return false;
    file.releasePages(0, identity.size);
    resolve();
    return true;
}

void Model::resolve()
{
    m_problems = m_indexProblems;
    bool interrupted = false;
    // The real folder of the model file counts as the model's folder too (a model file that is
    // a symlink into a cache), as long as data is resolved against the model's own folder.
    fs::path modelRealDir;
    if (!m_path.empty() && m_baseDir == m_path.parent_path()) {
        std::error_code ec;
        modelRealDir = fs::canonical(m_path, ec).parent_path();
    }
    LocationResolver resolver = m_openSibling ? LocationResolver(m_openSibling)
                                              : LocationResolver(m_baseDir, modelRealDir);
    // Tensors of one file share one resolved path object: most need no lookup by path.
    const fs::path* lastPath = nullptr;
    std::shared_ptr<DataFile> lastFile;
    auto open = [&](const fs::path& resolved, const FileIdentity& identity) {
        if (&resolved != lastPath || !lastFile || !(lastFile->identity() == identity)) {
            lastPath = &resolved;
            if (auto source = resolver.sourceAt(resolved)) {
                auto& slot = m_dataFiles[resolved];
                if (!slot || &slot->source() != source.get())
                    slot = std::make_shared<DataFile>(source);
                lastFile = slot;
            } else {
                lastFile = dataFile(resolved, identity);
            }
        }
        return lastFile;
    };
    DataLocations locations;
    std::string lastLocation;
    for (auto& info : m_tensors) {
        if (!info.isExternal())
            continue;
        resolveExternal(info, resolver, open, locations, m_problems);
        if (info.external->location() != lastLocation) {
            lastLocation = info.external->location();
            interrupted |= isTempName(fs::path(lastLocation).filename().string());
        }
    }
    if (interrupted)
        m_problems.push_back({Severity::Warning, {}, std::string(code::InterruptedSave),
            m_path.string()
                + ": a save was interrupted after the model was committed; its data still has "
                  "temporary names. onnx-repack clean "
                + m_path.string() + " (or saving the model again) gives it its final names."});

    std::unordered_set<std::string> broken;
    for (const auto& p : m_problems)
        if (p.severity == Severity::Error)
            broken.insert(p.tensor);
    for (auto& info : m_tensors) { // no name is built when no tensor is broken
        info.hasError = !broken.empty() && broken.count(info.qualifiedName()) > 0;
        if (info.hasError && info.external.present())
            info.external->dropFile(); // never read through a reference we found broken
    }
    // An external tensor readers need while building the graph: an error for the model's
    // readers, not for its bytes (after `broken`), so a save may bring it inline.
    for (const auto& info : m_tensors)
        if (info.isExternal() && info.mustStayInline())
            m_problems.push_back({Severity::Error, info.qualifiedName(),
                std::string(code::ExternalGraphBuildInput),
                info.qualifiedName() + " is stored externally, but it is " + *info.readAtGraphBuild
                    + ", whose values readers need while building the graph: ONNX Runtime "
                      "refuses to load the model; fix: onnx-repack repack (keeps it inline)"});
    // Data files that are also .safetensors files: their headers must agree with the model.
    // Only reported (after `broken`): reads and saves use the model's references, not them.
    checkSafetensorsFiles(m_tensors, m_problems);
}

std::shared_ptr<DataFile> Model::dataFile(const fs::path& resolved, const FileIdentity& identity)
{
    auto& slot = m_dataFiles[resolved];
    if (!slot || !(slot->identity() == identity))
        slot = std::make_shared<DataFile>(resolved, identity);
    return slot;
}

void Model::invalidateDataFiles(const std::vector<fs::path>& replaced, const std::string& reason)
{
    for (const auto& path : replaced) {
        auto it = m_dataFiles.find(path);
        if (it == m_dataFiles.end())
            continue;
        it->second->invalidate(reason);
        m_dataFiles.erase(it);
    }
}

void Model::adoptSave(const SavedModel& saved)
{
    // A remote model saved to a local path is that local model from now on: its data files are
    // resolved on disk beside it, no longer on the server.
    m_openSibling = nullptr;
    m_image.reset();
    adoptSavedFile(saved.path, saved.identity, saved.payloads);
    invalidateDataFiles(saved.replaced, saved.replacedReason);
    // With initializers left out of the protos (millions of tiny tensors), the file just
    // written is indexed, page by page, rather than a serialization of the whole model in
    // memory beside the index being built.
    if (!m_leftOut.empty()) {
        m_path = fs::absolute(saved.path).lexically_normal();
        m_fileBytes = saved.bytes;
        m_baseDir = m_path.parent_path();
        if (reindexFromFile(m_path, saved.identity))
            return;
    }
    setLocation(saved.path, saved.bytes);
}

void Model::adoptSavedFile(const fs::path& path, const FileIdentity& identity,
    const std::vector<std::pair<onnx::TensorProto*, FileRange>>& ranges)
{
    m_materialized.clear();
    m_inFile.clear();
    m_lender = nullptr; // the payloads are in the file written now
    m_fileIdentity = identity;
    for (const auto& [tensor, range] : ranges)
        m_inFile.emplace(tensor, range);
    m_modelFile = m_inFile.empty()
        ? nullptr
        : std::make_shared<DataFile>(fs::absolute(path).lexically_normal(), identity);
    for (auto& info : m_tensors)
        info.inlineRange.reset(); // until reindex()
}

} // namespace repack
