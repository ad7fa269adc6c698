// A loaded ONNX model: the parsed protobuf, its tensor index and the validation problems.
// Loading never reads weight bytes: external data and the raw_data payloads of the .onnx file
// itself (core/model/wire_scan.h) are memory-mapped on demand.
#pragma once

#include "core/io/tensor_bytes.h"
#include "core/problem.h"
#include "core/progress.h"
#include "core/result.h"
#include "data_file.h"
#include "external_reference.h"
#include "tensor_index.h"
#include "tensor_info.h"
#include "wire_scan.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

namespace onnx {
class ModelProto;
}
namespace google::protobuf {
class Arena;
}

namespace repack {

class StructureImage; // structure_image.h: a remote .onnx without its weights

// TensorBytes, what Model::read gives: core/io/tensor_bytes.h.

// Where a detached model reads the raw_data payloads its file leaves out (a hole where each
// lies): the bytes of the payload at `range` of the file, from the memory they live in (the
// Python package's save of an onnx.ModelProto lends those of the caller's proto, never copied
// into the file). Called on the thread that reads the tensor, for each read.
using PayloadLender = std::function<Result<TensorBytes>(FileRange range)>;

// What a committed save left on disk, for Model::adoptSave.
struct SavedModel {
    std::filesystem::path path; // the .onnx written
    FileIdentity identity; // of that file, as written
    uint64_t bytes = 0; // its size
    // raw_data payloads the save left in the .onnx, by the protos that now name them
    std::vector<std::pair<onnx::TensorProto*, FileRange>> payloads;
    std::vector<std::filesystem::path> replaced; // data files the save replaced
    std::string replacedReason; // why reads through them fail from now on
};

class Model {
public:
    // Maps `path`, parses it without the raw_data payloads of at least kInFileMinBytes (they
    // stay in the file: TensorInfo::inlineRange) and indexes and validates its tensors. Fails
    // only when the file cannot be read or is not an ONNX model; broken tensor references are
    // reported as problems and the model still opens.
    // Out of memory is an Error of kind OutOfMemory naming the file, not an exception.
    static Result<std::unique_ptr<Model>> load(const std::filesystem::path& path);
    // Smaller payloads are parsed: a range and a mapping cost more than their bytes.
    static constexpr uint64_t kInFileMinBytes = 1024;
    // A serialized model handed over in memory (the Python package's save of an
    // onnx.ModelProto): `readable` is a file only this process reaches (a memfd, as
    // /proc/self/fd/N), indexed as load() indexes a file, its payloads read from there and never
    // copied. The model has no path, as fromProto's: its external data resolve against `baseDir`.
    // With a `lender`, the file holds none of the bytes of the raw_data payloads of
    // kInFileMinBytes or more (TensorInfo::inlineRange): every read of one asks the lender,
    // never the file.
    static Result<std::unique_ptr<Model>> loadDetached(const std::filesystem::path& readable,
        const std::filesystem::path& baseDir, PayloadLender lender = {});
    // The payloads left in the file are lent (loadDetached): read() them, never the file.
    bool lendsPayloads() const { return static_cast<bool>(m_lender); }
    // A model that is not a local file (a web server, the Hub, S3), read from
    // `source`: its structure fetched without its weights (structure_image.h), its external data
    // files opened by `openSibling` from their locations, each byte of them read when asked. It
    // has no path and no folder: it is inspected, verified and compared, and saved to a local
    // path (never in place), after which it is that local model. `cancel` stops the fetch of the
    // structure (ErrorKind::Cancelled); `progress` hears the bytes fetched so far, of at most the
    // file's size.
    static Result<std::unique_ptr<Model>> openRemote(std::shared_ptr<ByteSource> source,
        SiblingOpener openSibling, const CancelToken* cancel = nullptr,
        const ProgressCallback& progress = {});
    bool isRemote() const { return static_cast<bool>(m_openSibling); }
    // What names the model in reports: its path, or a remote model's address (no secrets).
    std::string origin() const
    {
        return isRemote() && m_modelFile ? m_modelFile->path().string() : m_path.string();
    }
    // Wraps an in-memory model whose external data resolves against `baseDir`.
    static std::unique_ptr<Model> fromProto(
        std::unique_ptr<onnx::ModelProto> proto, std::filesystem::path baseDir);
    ~Model();

    // The parsed model, parsed on first use for a loaded model (loading indexes the file at the
    // wire level, core/model/tensor_index.h), whole (with any initializers a save left out of
    // it parsed in): call loadProtos() first where failure must be
    // handled; these throw std::runtime_error when the file can no longer be parsed. Tensors with
    // an inlineRange of at least kInFileMinBytes have an empty raw_data here until
    // materializeInline(); read their bytes with read().
    const onnx::ModelProto& proto() const;
    // Mutable access; call reindex() after changing tensors. Changing the tensors of a loaded
    // model needs materializeInline() and forgetInline() first (payload ranges are per proto).
    onnx::ModelProto& mutableProto();
    // Parses the .onnx into protos (a skeleton without the payloads of kInFileMinBytes or more)
    // and points every TensorInfo::proto at its TensorProto, once: what a save or an
    // external-data operation needs first. Fails, changing nothing, when the file was replaced
    // or changed since it was opened, or protobuf refuses it.
    Status loadProtos();
    // loadProtos() for a save that neither reads nor changes the TensorProtos of most tensors:
    // the main graph initializers `leaveOut` selects (by tensor index) whose raw_data is not
    // left in the .onnx, and the main graph nodes all of whose tensors it selects and none of
    // whose payloads are left there (Constant nodes; nodes without tensors), stay out of the
    // protos, each kept as its serialization, byte for byte what protobuf writes for it (a
    // parsed TensorProto costs ~300 bytes, a tiny tensor's serialization ~12), so a save
    // writes what it would with them parsed. The TensorInfo::proto of their tensors is null;
    // read() still reads them; writeModel() with leftOut() puts them back, each at its place;
    // they are checked as loadProtos() checks them. A later loadProtos(), proto() or
    // mutableProto() parses them in. With the protos loaded already, only parses in those left
    // out before when a tensor of one of them is not to be left out now.
    Status loadProtosLeavingOut(const std::function<bool(size_t)>& leaveOut);
    bool protosLoaded() const { return m_proto != nullptr; }
    // The initializers and nodes loadProtosLeavingOut() left out (empty once parsed in), and
    // the protos without them: what a save writes.
    const ElidedElements& leftOut() const { return m_leftOut; }
    onnx::ModelProto& protoLeavingOut();
    // ir_version, producer and opsets, as the index read them.
    const ModelHeader& header() const { return m_header; }

    // Payloads of at least kInFileMinBytes read from the .onnx file on demand, and the file
    // they are read from (null when none).
    size_t inFileCount() const;
    const DataFile* inFileSource() const { return m_modelFile.get(); }
    // Puts payloads left in the .onnx file back into their protos, for an operation that
    // serializes or rewrites them: all of them, or those of the tensors `needed` names by
    // index (a tensor that gets new storage needs none). All or nothing: fails, changing
    // nothing, when the .onnx was replaced or changed since it was opened.
    Status materializeInline(const std::function<bool(size_t)>& needed = {});
    // Undoes materializeInline(): the payloads are read from the file again.
    void releaseInline();
    // After the protos were rewritten: the payloads' ranges are forgotten (what was
    // materialized stays in the protos); call reindex() next.
    void forgetInline();

    // After a save committed (its protos already rewritten for the new files): the model is
    // what is now on disk. Payloads left in the new .onnx are read from there, nothing more
    // from the file it was loaded from; reads through the data files the save replaced fail;
    // the model lives at the new path and is indexed again. One call, so that no caller can
    // run these steps in another order or leave one out.
    void adoptSave(const SavedModel& saved);

    const std::filesystem::path& path() const { return m_path; }
    // Size of the .onnx file when loaded or last saved (0 for in-memory models).
    uint64_t fileBytes() const { return m_fileBytes; }
    // Which file the .onnx was when loaded or last saved (all zero for in-memory models).
    const FileIdentity& fileIdentity() const { return m_fileIdentity; }
    const std::filesystem::path& baseDir() const { return m_baseDir; }
    // Resolves every external tensor against `dir` from now on, and revalidates.
    void setBaseDir(std::filesystem::path dir);

    const std::vector<TensorInfo>& tensors() const { return m_tensors; }
    const std::vector<Problem>& problems() const { return m_problems; }
    bool hasErrors() const;
    // The message of the first error naming `tensor`, for errors that refuse to use it; empty
    // when none does.
    std::string firstErrorOf(const TensorInfo& tensor) const;

    // Reads one tensor's bytes: mapped for external tensors, never garbage: a broken or
    // invalidated reference is an error naming the tensor and the file.
    Result<TensorBytes> read(size_t index) const;

    // Rebuilds the index and problems after the protobuf changed.
    void reindex();

    // The shared data file for a resolved path (one mapping per file, however many tensors).
    // A file seen with another identity than the cached one gets a new DataFile.
    std::shared_ptr<DataFile> dataFile(
        const std::filesystem::path& resolved, const FileIdentity& identity);
    // Invalidates and forgets every cached data file whose path is in `replaced`.
    void invalidateDataFiles(
        const std::vector<std::filesystem::path>& replaced, const std::string& reason);

private:
    // `baseDir`: a detached model's (loadDetached), null for the file's own folder.
    static Result<std::unique_ptr<Model>> loadUnguarded(
        const std::filesystem::path& path, const std::filesystem::path* baseDir);
    Model() = default;
    // adoptSave's steps: the raw_data payloads of `ranges` lie in the file at `path` (with
    // `identity`) and are read from there; then the model lives at `path` (`fileBytes` bytes).
    void adoptSavedFile(const std::filesystem::path& path, const FileIdentity& identity,
        const std::vector<std::pair<onnx::TensorProto*, FileRange>>& ranges);
    void setLocation(std::filesystem::path path, uint64_t fileBytes);
    // Replaces the index with `index` (problems of external references are added by resolve()).
    void adoptIndex(TensorIndex index);
    // Resolves external references against the base directory, and the problems that follow.
    void resolve();
    // A typed tensor's bytes from its TensorProto in the .onnx, protos not being loaded.
    Result<std::vector<std::byte>> typedBytesFromFile(size_t index) const;
    // `nodes`: main graph nodes may be left out too.
    Status parseProtos(const std::function<bool(size_t)>& leaveOut, bool nodes);
    // Parses the left-out initializers and nodes into the protos, each at its place.
    Status parseLeftOut();
    // A left-out tensor, parsed on its own.
    Result<onnx::TensorProto> leftOutTensor(size_t index) const;
    // The model serialized: the protos with the left-out initializers put back.
    std::string serializeWhole() const;
    // reindex() of protos whose serialization is `bytes` (the pages it is done with go to
    // `release`).
    Status indexOwnProtos(std::span<const std::byte> bytes, const ReleaseRule& release);
    // reindex() from the file a save just wrote with these protos; false (the index gone)
    // when that file cannot be read as the one written.
    bool reindexFromFile(const std::filesystem::path& path, const FileIdentity& identity);

    // A loaded model's protos live in an arena (declared first: destroyed last): one block
    // per megabyte instead of a malloc per string and message, and freed at once.
    struct ProtoDeleter {
        void operator()(onnx::ModelProto* proto) const;
    };
    std::unique_ptr<google::protobuf::Arena> m_arena;
    std::unique_ptr<onnx::ModelProto, ProtoDeleter> m_proto;
    std::filesystem::path m_path;
    std::filesystem::path m_baseDir;
    uint64_t m_fileBytes = 0;
    FileIdentity m_fileIdentity;
    ModelHeader m_header;
    std::vector<TensorInfo> m_tensors;
    std::vector<Problem> m_indexProblems; // found by the index, before resolve()
    std::vector<Problem> m_problems;
    // Typed tensors of a model whose protos are not loaded: their TensorProto's ranges.
    std::unordered_map<size_t, std::vector<FileRange>> m_typedSpans;
    std::map<std::filesystem::path, std::shared_ptr<DataFile>> m_dataFiles;
    // raw_data payloads left in the .onnx file once protos are loaded, and the mapping of the
    // .onnx the index and every payload are read from (until a save replaces it).
    std::unordered_map<onnx::TensorProto*, FileRange> m_inFile;
    std::shared_ptr<DataFile> m_modelFile;
    PayloadLender m_lender; // a detached model's: the payloads m_modelFile leaves out
    SiblingOpener m_openSibling; // a remote model's (openRemote)
    // A remote model's structure (openRemote): what its protos are parsed from; the bytes it
    // leaves out are the payloads the parse leaves in the file (m_inFile), read from the source.
    std::shared_ptr<const StructureImage> m_image;
    std::vector<onnx::TensorProto*> m_materialized;
    ElidedElements m_leftOut; // main graph initializers and nodes not in m_proto
};

// The paths the external tensors of the model file at `modelPath` read (relative locations
// against its folder, lexically normal, distinct), as Model::load would resolve them, found
// without indexing the model: what a scan of its folder asks of the other models. Fails when
// the file cannot be read (kind Io, NotFound, OutOfMemory) or is no ONNX model (Corrupt).
Result<std::vector<std::filesystem::path>> externalDataPaths(
    const std::filesystem::path& modelPath);

// materializeInline() for an operation that rewrites the model's protos: unless commit() is
// called (the rewrite is kept), the model goes back to reading its payloads from the file.
class InlineMaterialization {
public:
    explicit InlineMaterialization(Model& model)
        : m_model(model)
    {
    }
    ~InlineMaterialization()
    {
        if (m_active)
            m_model.releaseInline();
    }
    InlineMaterialization(const InlineMaterialization&) = delete;
    InlineMaterialization& operator=(const InlineMaterialization&) = delete;

    Status materialize(const std::function<bool(size_t)>& needed = {})
    {
        Status s = m_model.materializeInline(needed);
        m_active = s.ok();
        return s;
    }
    void commit()
    {
        if (m_active)
            m_model.forgetInline();
        m_active = false;
    }

private:
    Model& m_model;
    bool m_active = false;
};

} // namespace repack
