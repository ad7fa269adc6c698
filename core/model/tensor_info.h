// One entry of the tensor index: where a tensor sits in the model and where its bytes live.
#pragma once

#include "compact.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
}

namespace repack {

class DataFile;

enum class TensorKind : uint8_t { Initializer, Attribute, Sparse };

// Inline storage is either `raw_data` or one of the typed repeated fields.
enum class Storage : uint8_t { Raw, Typed, External };

// What the external tensors naming one data file share: one object per distinct location of a
// model (and per outcome of its checks), never one per tensor; immutable once built, so a
// tensor's location, resolved path and file always belong together.
struct DataLocation {
    std::string location; // as written in the model
    std::filesystem::path resolvedPath; // base dir / location, lexically normal; empty: unresolved
    std::shared_ptr<DataFile> file; // null when the reference failed validation
};

// An external tensor's reference: its own byte range and checksum, and its shared location.
// 32 bytes, kept in the tensor's entry (TensorInfo::external), no allocation of its own: an
// index of many external tensors holds one per tensor.
class ExternalRef {
public:
    uint64_t offset = 0;
    Compact<uint64_t, UINT64_MAX> length; // absent: the tensor's byte size is read from offset
    Rare<std::string> checksum; // hex SHA-1, when present

    // A 'location' key was given (possibly empty).
    bool hasLocation() const { return m_where && !(m_where == noLocation()); }
    const std::string& location() const { return where().location; }
    const std::filesystem::path& resolvedPath() const { return where().resolvedPath; }
    const std::shared_ptr<DataFile>& file() const { return where().file; }
    // The shared part, null when no location was given: one address per shared location.
    const DataLocation* shared() const { return hasLocation() ? m_where.get() : nullptr; }
    void setShared(Shared<DataLocation> where) { m_where = std::move(where); }
    // Keeps the location and its resolved path, drops the file: never read through it.
    void dropFile();

private:
    friend class ExternalField;
    // Written: a reference, with or without a location (TensorInfo::external.present()).
    bool written() const { return bool(m_where); }
    void markWritten()
    {
        if (!m_where)
            m_where = noLocation();
    }
    // The location of a reference written without one: empty, shared by all such references.
    static const Shared<DataLocation>& noLocation();
    const DataLocation& where() const;
    Shared<DataLocation> m_where;
};

// TensorInfo::external: the tensor's ExternalRef, inside the entry, read as through a pointer
// (`info.external->offset`); absent (a default ExternalRef is read) until written through it.
class ExternalField {
public:
    bool present() const { return m_ref.written(); }
    const ExternalRef& operator*() const { return m_ref; }
    const ExternalRef* operator->() const { return &m_ref; }
    ExternalRef& operator*()
    {
        m_ref.markWritten();
        return m_ref;
    }
    ExternalRef* operator->() { return &**this; }
    void reset() { m_ref = ExternalRef{}; }

private:
    ExternalRef m_ref;
};

// A byte range of the .onnx file itself: a raw_data payload Model::load left in the file.
struct FileRange {
    uint64_t offset = 0;
    uint64_t length = 0;
    bool operator==(const FileRange&) const = default;
};
// No file range starts at the last byte of a 64-bit offset: it stands for "none".
inline constexpr FileRange kNoFileRange{UINT64_MAX, 0};
// No tensor has 2^64 - 1 elements or bytes (ONNX caps a tensor at 2^63): it stands for unknown.
using Count = Compact<uint64_t, UINT64_MAX>;

// The elements of a shape: nullopt for a negative dimension or a count past 64 bits; 0 when
// any dimension is 0.
std::optional<uint64_t> elementCount(std::span<const int64_t> dims);

// An entry costs 144 bytes with no allocation of its own for an unnamed or short-named
// tensor of up to two dims, external or not, which is what a model of many small tensors holds:
// the scope is one string per graph, an external reference sits in the entry, and what only
// some tensors have (a checksum, a reason to stay inline) is a pointer.
struct TensorInfo {
    std::string name;
    SharedString scope; // one string for all tensors of a graph

    TensorKind kind = TensorKind::Initializer;
    Storage storage = Storage::Raw;
    bool hasError = false; // some error-severity problem names this tensor
    // An initializer that no node input and no graph output names, in a model whose main graph
    // has nodes (core/inspect/audit.h warns about it).
    bool unusedInitializer = false;
    int32_t dataType = 0;
    Dims shape;
    Count bytes; // packed byte size; strings: sum of lengths
    ExternalField external; // present when storage == External
    // Storage::Raw whose raw_data is still in the .onnx file (proto->raw_data() is empty until
    // Model::materializeInline()); Model::read maps it.
    Compact<FileRange, kNoFileRange> inlineRange;
    // Why readers need this tensor's values while they build the graph
    // (core/model/graph_build_inputs.h), e.g. "the shape input of Reshape 'r1'"; empty when they do
    // not. Such a tensor stays inline.
    Rare<std::string> readAtGraphBuild;
    onnx::TensorProto* proto = nullptr; // owned by the Model

    // Of the shape (not kept: 8 bytes a tensor); absent when dims are negative or overflow.
    Count elements() const { return elementCount(shape); }
    bool isExternal() const { return storage == Storage::External; }
    bool mustStayInline() const { return !readAtGraphBuild->empty(); }
    uint64_t byteSize() const { return bytes.value_or(0); }
    // Stable identity within a model, used for diffs and problem reports.
    std::string qualifiedName() const { return scope + "/" + name; }
};

std::string_view kindName(TensorKind kind);
std::string_view storageName(Storage storage); // "raw", "typed", "external"

} // namespace repack
