#include "model.h"

#include "core/file_names.h"
#include "core/mapped_memory.h"
#include "core/posix_file.h"
#include "external_reference.h"
#include "safetensors.h"
#include "tensor_index.h"
#include "tensor_protos.h"
#include "typed_data.h"
#include "wire_scan.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <limits>
#include <unordered_set>

namespace fs = std::filesystem;

namespace repack {

Model::~Model() = default;

void Model::ProtoDeleter::operator()(onnx::ModelProto* proto) const
{
    if (proto && !proto->GetArena())
        delete proto; // an arena's messages go with the arena
}

namespace {

// The model parsed from the (skeleton) bytes `data`, allocated in `arena`.
Result<onnx::ModelProto*> parseModel(
    std::string_view data, const fs::path& path, google::protobuf::Arena& arena)
{
    if (data.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
        return Error::corrupt(path.string()
            + ": not a valid ONNX model (malformed or truncated protobuf): "
            + std::to_string(data.size()) + " bytes, past protobuf's 2 GiB limit");
    auto* proto = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
    google::protobuf::io::ArrayInputStream stream(data.data(), static_cast<int>(data.size()));
    google::protobuf::io::CodedInputStream coded(&stream);
    coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
    if (!proto->ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
        return Error::corrupt(
            path.string() + ": not a valid ONNX model (malformed or truncated protobuf)");
    if (!proto->has_graph() && proto->functions_size() == 0)
        return Error::corrupt(path.string() + ": not an ONNX model (no graph and no functions)");
    return proto;
}

// A parsed model whose large raw_data payloads stay in `file` (mapped, never copied).
struct Parsed {
    std::unique_ptr<google::protobuf::Arena> arena;
    onnx::ModelProto* proto = nullptr; // in `arena`
    std::unordered_map<onnx::TensorProto*, FileRange> inFile;
    ElidedInitializers leftOut;
};

std::unique_ptr<google::protobuf::Arena> newArena()
{
    google::protobuf::ArenaOptions options;
    options.start_block_size = 64 << 10;
    options.max_block_size = 1 << 20;
    return std::make_unique<google::protobuf::Arena>(options);
}

Result<Parsed> parseMapped(
    std::span<const std::byte> file, const fs::path& path, const ElideRule& leaveOut)
{
    auto scan = scanModel(file, path.string(), Model::kInFileMinBytes, leaveOut);
    if (!scan)
        return scan.error();
    Parsed parsed{newArena(), nullptr, {}, std::move(scan->elided)};
    auto proto = parseModel(scan->changed
            ? std::string_view(scan->skeleton)
            : std::string_view(reinterpret_cast<const char*>(file.data()), file.size()),
        path, *parsed.arena);
    if (!proto)
        return proto.error();
    std::string().swap(scan->skeleton);
    parsed.proto = *proto;
    // In file order: a tensor's raw_data is its last payload, as protobuf keeps it.
    for (const auto& payload : scan->payloads) {
        onnx::TensorProto* tensor = tensorAt(*parsed.proto, payload.path);
        if (!tensor)
            return Error::corrupt(path.string() + ": the tensor whose raw_data starts at byte "
                + std::to_string(payload.offset) + " is not in the parsed model");
        if (payload.stripped)
            parsed.inFile[tensor] = {payload.offset, payload.length};
        else
            parsed.inFile.erase(tensor);
    }
    return parsed;
}

constexpr int kLoadAttempts = 8;

} // namespace

Result<std::unique_ptr<Model>> Model::load(const fs::path& path)
{
    return guardMemory(
        path.string() + ": indexing its tensors", [&] { return loadUnguarded(path, nullptr); });
}

Result<std::unique_ptr<Model>> Model::loadDetached(
    const fs::path& readable, const fs::path& baseDir)
{
    return guardMemory("the model handed over: indexing its tensors",
        [&] { return loadUnguarded(readable, &baseDir); });
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
                [&] { index = indexTensors(*bytes, path.string(), inFile, release); });
            !s)
            return s.error();
        if (!index)
            return index.error();
        if (!index->hasGraph && index->functionCount == 0)
            return Error::corrupt(
                path.string() + ": not an ONNX model (no graph and no functions)");
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

Status Model::loadProtos()
{
    if (m_proto)
        return m_leftOut.empty() ? Status() : parseLeftOut();
    return parseProtos({});
}

Status Model::loadProtosLeavingOut(const std::function<bool(size_t)>& leaveOut)
{
    if (!m_proto)
        return parseProtos(leaveOut);
    // Left out by an earlier save: parsed in when this one needs one of them.
    for (size_t e = 0; e < m_leftOut.size(); ++e)
        if (!leaveOut(m_leftOut.initializer(e)))
            return parseLeftOut();
    return {};
}

onnx::ModelProto& Model::protoLeavingOut()
{
    if (!m_proto)
        return mutableProto();
    return *m_proto;
}

namespace {

std::string unreadable(const fs::path& path)
{
    return path.string() + ": not a valid ONNX model (malformed or truncated protobuf)";
}

// Tensor i of the index is either the next of `protoCount` parsed protos or the next
// initializer left out (`leftOut`; the main graph's initializers come first in both): calls
// onLeftOut(i, entry) or onProto(i, proto position) for each tensor in order, while they
// return true.
template <typename OnLeftOut, typename OnProto>
void interleave(
    const ElidedInitializers& leftOut, size_t protoCount, OnLeftOut&& onLeftOut, OnProto&& onProto)
{
    for (size_t i = 0, p = 0, e = 0; i < protoCount + leftOut.size(); ++i) {
        const bool more = e < leftOut.size() && leftOut.initializer(e) == i
            ? onLeftOut(i, e++)
            : p < protoCount && onProto(i, p++);
        if (!more)
            return;
    }
}

bool parseTensor(std::span<const std::byte> bytes, onnx::TensorProto& tensor)
{
    return bytes.size() <= static_cast<size_t>(std::numeric_limits<int>::max())
        && tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

} // namespace

Status Model::parseProtos(const std::function<bool(size_t)>& leaveOut)
{
    if (!m_modelFile)
        return Error::internal(m_path.string() + ": the model file is no longer mapped");
    auto bytes = m_modelFile->view(0, m_fileBytes);
    if (!bytes)
        return bytes.error();
    Result<Parsed> parsed = Error::internal("not run");
    ElideRule elide;
    if (leaveOut) {
        elide.select = [&](uint64_t i) { return i < m_tensors.size() && leaveOut(i); };
        for (size_t i = 0; i < m_tensors.size(); ++i)
            elide.atMost += leaveOut(i) ? 1 : 0;
    }
    if (Status s
        = readMapped(m_path.string(), [&] { parsed = parseMapped(*bytes, m_path, elide); });
        !s)
        return s.error();
    if (!parsed)
        return parsed.error();
    m_modelFile->releasePages(0, m_fileBytes); // the parse is done with them
    const std::vector<onnx::TensorProto*> protos = tensorProtos(*parsed->proto);
    const ElidedInitializers& leftOut = parsed->leftOut;
    // The ones left out are parsed here, one at a time, so that protobuf refuses the same
    // models either way; and their bytes must be protobuf's serialization of them (a save
    // writes the same bytes whatever it parsed).
    bool agree = protos.size() + leftOut.size() == m_tensors.size();
    bool readable = true;
    bool asProtobufWrites = true;
    onnx::TensorProto scratch;
    std::string serialized;
    const auto named = [&](size_t i, const std::string& name) {
        agree = name.empty() || name == m_tensors[i].name;
        return agree;
    };
    if (agree)
        interleave(
            leftOut, protos.size(),
            [&](size_t i, size_t e) {
                const auto bytes = leftOut.tensor(e);
                readable = parseTensor(bytes, scratch);
                if (!readable)
                    return false;
                if (asProtobufWrites) {
                    scratch.SerializeToString(&serialized);
                    asProtobufWrites = std::equal(bytes.begin(), bytes.end(),
                        reinterpret_cast<const std::byte*>(serialized.data()),
                        reinterpret_cast<const std::byte*>(serialized.data() + serialized.size()));
                }
                return named(i, scratch.name());
            },
            [&](size_t i, size_t p) { return named(i, protos[p]->name()); });
    if (!readable)
        return Error::corrupt(unreadable(m_path));
    if (!agree)
        return Error::corrupt(m_path.string()
            + ": protobuf reads other tensors than the index found (a field given twice?)");
    if (!asProtobufWrites) { // rare: written by another serializer, or by hand
        ElidedInitializers rewritten;
        for (size_t e = 0; e < leftOut.size(); ++e) {
            if (!parseTensor(leftOut.tensor(e), scratch))
                return Error::corrupt(unreadable(m_path));
            scratch.SerializeToString(&serialized);
            rewritten.add(leftOut.initializer(e),
                std::as_bytes(std::span(serialized.data(), serialized.size())));
        }
        parsed->leftOut = std::move(rewritten);
    }
    interleave(
        leftOut, protos.size(),
        [&](size_t i, size_t) {
            m_tensors[i].proto = nullptr;
            return true;
        },
        [&](size_t i, size_t p) {
            m_tensors[i].proto = protos[p];
            return true;
        });
    m_arena = std::move(parsed->arena);
    m_proto.reset(parsed->proto);
    m_inFile = std::move(parsed->inFile);
    m_leftOut = std::move(parsed->leftOut);
    m_typedSpans.clear();
    return {};
}

Status Model::parseLeftOut()
{
    // Parsed first, so that a failure changes nothing.
    std::vector<onnx::TensorProto*> parsed(m_leftOut.size());
    for (size_t e = 0; e < m_leftOut.size(); ++e) {
        parsed[e] = google::protobuf::Arena::CreateMessage<onnx::TensorProto>(m_arena.get());
        if (!parseTensor(m_leftOut.tensor(e), *parsed[e]))
            return Error::corrupt(unreadable(m_path));
    }
    auto* initializers = m_proto->mutable_graph()->mutable_initializer();
    std::vector<onnx::TensorProto*> kept(static_cast<size_t>(initializers->size()));
    initializers->UnsafeArenaExtractSubrange(0, initializers->size(), kept.data());
    initializers->Reserve(static_cast<int>(kept.size() + parsed.size()));
    interleave(
        m_leftOut, kept.size(),
        [&](size_t i, size_t e) {
            m_tensors[i].proto = parsed[e];
            initializers->UnsafeArenaAddAllocated(parsed[e]);
            return true;
        },
        [&](size_t, size_t k) {
            initializers->UnsafeArenaAddAllocated(kept[k]);
            return true;
        });
    m_leftOut.clear();
    return {};
}

Result<onnx::TensorProto> Model::leftOutTensor(size_t index) const
{
    const auto entry = m_leftOut.find(index);
    onnx::TensorProto tensor;
    if (!entry || !parseTensor(m_leftOut.tensor(*entry), tensor))
        return Error::internal(
            m_tensors[index].qualifiedName() + ": its TensorProto is not loaded");
    return tensor;
}

std::string Model::serializeWhole() const
{
    std::string bytes;
    m_proto->SerializeToString(&bytes);
    if (m_leftOut.empty())
        return bytes;
    auto whole = spliceModel(
        std::as_bytes(std::span(bytes.data(), bytes.size())), m_path.string(),
        [](std::span<const std::byte>) { return std::optional<PayloadReplacement>(); }, &m_leftOut);
    if (!whole)
        throw std::logic_error(whole.error().message);
    return std::move(whole->bytes);
}

const onnx::ModelProto& Model::proto() const
{
    if (!m_proto || !m_leftOut.empty())
        if (Status s = const_cast<Model*>(this)->loadProtos(); !s)
            throw std::runtime_error(s.error().message);
    return *m_proto;
}

onnx::ModelProto& Model::mutableProto()
{
    if (Status s = loadProtos(); !s)
        throw std::runtime_error(s.error().message);
    return *m_proto;
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

Status Model::indexOwnProtos(std::span<const std::byte> bytes, const ReleaseRule& release)
{
    const std::vector<onnx::TensorProto*> protos = tensorProtos(*m_proto);
    const auto eachProto = [&](const auto& f) {
        interleave(
            m_leftOut, protos.size(), [](size_t, size_t) { return true; },
            [&](size_t i, size_t p) {
                f(i, protos[p]);
                return true;
            });
    };
    std::unordered_map<size_t, FileRange> inFileByIndex;
    eachProto([&](size_t i, onnx::TensorProto* proto) {
        if (auto it = m_inFile.find(proto); it != m_inFile.end())
            inFileByIndex.emplace(i, it->second);
    });
    const RawPayloadRule inFile = [&](size_t tensor, FileRange) -> std::optional<FileRange> {
        auto it = inFileByIndex.find(tensor);
        return it == inFileByIndex.end() ? std::nullopt : std::optional<FileRange>(it->second);
    };
    auto index = indexTensors(bytes, m_path.string(), inFile, release);
    if (!index || index->tensors.size() != protos.size() + m_leftOut.size())
        return Error::internal(m_path.string() + ": the index of the model's own protos failed"
            + (index ? std::string() : ": " + index.error().message));
    eachProto([&](size_t i, onnx::TensorProto* proto) { index->tensors[i].proto = proto; });
    adoptIndex(std::move(*index));
    m_typedSpans.clear(); // read from the protos
    return {};
}

void Model::resolve()
{
    m_problems = m_indexProblems;
    // Tensors of one file share one resolved path object: most need no lookup by path.
    const fs::path* lastPath = nullptr;
    std::shared_ptr<DataFile> lastFile;
    auto open = [&](const fs::path& resolved, const FileIdentity& identity) {
        if (&resolved != lastPath || !lastFile || !(lastFile->identity() == identity)) {
            lastPath = &resolved;
            lastFile = dataFile(resolved, identity);
        }
        return lastFile;
    };
    bool interrupted = false;
    // The real folder of the model file counts as the model's folder too (a model file that is
    // a symlink into a cache), as long as data is resolved against the model's own folder.
    fs::path modelRealDir;
    if (!m_path.empty() && m_baseDir == m_path.parent_path()) {
        std::error_code ec;
        modelRealDir = fs::canonical(m_path, ec).parent_path();
    }
    LocationResolver resolver(m_baseDir, modelRealDir);
    std::string lastLocation;
    for (auto& info : m_tensors) {
        if (!info.isExternal())
            continue;
        resolveExternal(info, resolver, open, m_problems);
        if (info.external->location != lastLocation) {
            lastLocation = info.external->location;
            interrupted |= isTempName(fs::path(lastLocation).filename().string());
        }
    }
    if (interrupted)
        m_problems.push_back({Severity::Warning, {}, std::string(code::InterruptedSave),
            m_path.string()
                + ": a save was interrupted after the model was "
                  "committed; its data still has temporary names. "
                  "Saving the model again gives it final names."});

    std::unordered_set<std::string> broken;
    for (const auto& p : m_problems)
        if (p.severity == Severity::Error)
            broken.insert(p.tensor);
    for (auto& info : m_tensors) {
        info.hasError = broken.count(info.qualifiedName()) > 0;
        if (info.hasError && info.external.present())
            info.external->file.reset(); // never read through a reference we found broken
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

Status Model::materializeInline(const std::function<bool(size_t)>& needed)
{
    if (Status s = loadProtos(); !s)
        return s;
    if (m_inFile.empty() || !m_materialized.empty())
        return {};
    std::unordered_set<const onnx::TensorProto*> skip;
    if (needed)
        for (size_t i = 0; i < m_tensors.size(); ++i)
            if (m_tensors[i].inlineRange && !needed(i))
                skip.insert(m_tensors[i].proto);
    // Read with pread, not copied from the mapping: faulting in a mapping page by page costs
    // more than the copy itself (several seconds per GiB on a virtual machine). Everything is
    // read first, from the very file validated, so a failure changes nothing.
    auto fd = UniqueFd::openRead(m_modelFile->path());
    if (!fd)
        return fd.error();
    auto identity = identityOf(fd->get());
    if (!identity || !(*identity == m_modelFile->identity()))
        return Error::changed(m_modelFile->path().string()
            + ": invalidated: the file was replaced or changed since the model was opened");
    std::vector<std::pair<onnx::TensorProto*, std::string>> payloads;
    for (const auto& [tensor, range] : m_inFile) {
        if (skip.count(tensor))
            continue;
        std::string bytes(range.length, '\0');
        auto view = std::as_writable_bytes(std::span(bytes.data(), bytes.size()));
        if (Status s = preadExact(fd->get(), view, range.offset, m_modelFile->path()); !s)
            return s.error();
        payloads.emplace_back(tensor, std::move(bytes));
    }
    for (auto& [tensor, bytes] : payloads) {
        tensor->set_raw_data(std::move(bytes));
        m_materialized.push_back(tensor);
    }
    return {};
}

void Model::releaseInline()
{
    for (onnx::TensorProto* tensor : m_materialized)
        std::string().swap(*tensor->mutable_raw_data());
    m_materialized.clear();
}

void Model::forgetInline()
{
    m_inFile.clear();
    m_materialized.clear();
    m_modelFile.reset();
    for (auto& info : m_tensors)
        info.inlineRange.reset();
}

void Model::adoptSave(const SavedModel& saved)
{
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
    m_fileIdentity = identity;
    for (const auto& [tensor, range] : ranges)
        m_inFile.emplace(tensor, range);
    m_modelFile = m_inFile.empty()
        ? nullptr
        : std::make_shared<DataFile>(fs::absolute(path).lexically_normal(), identity);
    for (auto& info : m_tensors)
        info.inlineRange.reset(); // until reindex()
}

Result<std::vector<std::byte>> Model::typedBytesFromFile(size_t index) const
{
    const TensorInfo& info = m_tensors[index];
    auto it = m_typedSpans.find(index);
    if (it == m_typedSpans.end() || !m_modelFile)
        return Error::internal(info.qualifiedName() + ": its typed data is not loaded");
    // protobuf merges the occurrences of a message in order, as the index read them.
    onnx::TensorProto tensor;
    std::string failure;
    for (const FileRange& range : it->second) {
        auto view = m_modelFile->view(range.offset, range.length);
        if (!view)
            return Error{info.qualifiedName() + ": " + view.error().message, view.error().kind};
        Status s = readMapped(
            info.qualifiedName() + " (in " + m_modelFile->path().string() + ")", [&] {
                google::protobuf::io::CodedInputStream coded(
                    reinterpret_cast<const uint8_t*>(view->data()), static_cast<int>(view->size()));
                if (!tensor.MergeFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
                    failure = info.qualifiedName() + ": protobuf cannot read its TensorProto in "
                        + m_modelFile->path().string();
            });
        if (!s)
            return s.error();
        if (!failure.empty())
            return Error::corrupt(failure);
    }
    return typedDataToBytes(tensor);
}

Result<TensorBytes> Model::read(size_t index) const
{
    if (index >= m_tensors.size())
        return Error::usage("tensor index " + std::to_string(index) + " out of range");
    const TensorInfo& info = m_tensors[index];
    if (info.hasError)
        return Error::corrupt("cannot read " + info.qualifiedName() + ": " + firstErrorOf(info));
    switch (info.storage) {
    case Storage::External: {
        if (!info.external->file)
            return Error::corrupt(info.qualifiedName() + ": external data of '"
                + info.external->location + "' is not readable (see the model's problems)");
        const uint64_t length = info.external->length.value_or(info.byteSize());
        auto view = info.external->file->view(info.external->offset, length);
        if (!view)
            return Error{info.qualifiedName() + ": " + view.error().message, view.error().kind};
        return TensorBytes::view(*view, info.external->file.get());
    }
    case Storage::Raw: {
        if (info.inlineRange) {
            if (!m_modelFile)
                return Error::internal(info.qualifiedName() + ": its raw_data is no longer mapped");
            auto view = m_modelFile->view(info.inlineRange->offset, info.inlineRange->length);
            if (!view)
                return Error{info.qualifiedName() + ": " + view.error().message, view.error().kind};
            return TensorBytes::view(*view, m_modelFile.get());
        }
        if (!info.proto && m_proto) { // left out of the protos
            auto tensor = leftOutTensor(index);
            if (!tensor)
                return tensor.error();
            const std::string& raw = tensor->raw_data();
            const auto* begin = reinterpret_cast<const std::byte*>(raw.data());
            return TensorBytes::own(std::vector<std::byte>(begin, begin + raw.size()));
        }
        if (!info.proto)
            return Error::internal(info.qualifiedName() + ": its raw_data is not loaded");
        const std::string& raw = info.proto->raw_data();
        return TensorBytes::view(std::as_bytes(std::span(raw.data(), raw.size())));
    }
    case Storage::Typed: {
        Result<std::vector<std::byte>> bytes = Error::internal("not read");
        if (info.proto) {
            bytes = typedDataToBytes(*info.proto);
        } else if (m_proto) { // left out of the protos
            auto tensor = leftOutTensor(index);
            bytes = tensor ? typedDataToBytes(*tensor)
                           : Result<std::vector<std::byte>>(tensor.error());
        } else {
            bytes = typedBytesFromFile(index);
        }
        if (!bytes)
            return Error{info.qualifiedName() + ": " + bytes.error().message, bytes.error().kind};
        return TensorBytes::own(std::move(*bytes));
    }
    }
    return Error::internal(info.qualifiedName() + ": unknown storage");
}

Result<std::vector<fs::path>> externalDataPaths(const fs::path& modelPath)
{
    return guardMemory(modelPath.string() + ": reading its external data locations",
        [&]() -> Result<std::vector<fs::path>> {
            auto fd = UniqueFd::openRead(modelPath);
            if (!fd)
                return fd.error();
            auto identity = identityOf(fd->get());
            if (!identity)
                return Error{
                    modelPath.string() + ": " + identity.error().message, identity.error().kind};
            if (identity->size == 0)
                return Error::corrupt(modelPath.string() + ": empty file");
            const fs::path absolute = fs::absolute(modelPath).lexically_normal();
            DataFile file(absolute, *identity);
            auto bytes = file.view(0, identity->size);
            if (!bytes)
                return bytes.error();
            Result<ExternalLocations> found = Error::internal("not run");
            const ReleaseRule release
                = [&file](uint64_t offset, uint64_t length) { file.releasePages(offset, length); };
            if (Status s = readMapped(modelPath.string(),
                    [&] { found = externalLocations(*bytes, modelPath.string(), release); });
                !s)
                return s.error();
            if (!found)
                return found.error();
            if (!found->isModel)
                return Error::corrupt(
                    modelPath.string() + ": not an ONNX model (no graph and no functions)");
            std::vector<fs::path> out;
            for (const std::string& location : found->locations) {
                const fs::path written(location);
                if (!location.empty() && written.is_relative())
                    out.push_back((absolute.parent_path() / written).lexically_normal());
            }
            return out;
        });
}

} // namespace repack
