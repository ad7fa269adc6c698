// One entry of the tensor index: where a tensor sits in the model and where its bytes live.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
}

namespace repack {

class DataFile;

enum class TensorKind { Initializer, Attribute, Sparse };

// Inline storage is either `raw_data` or one of the typed repeated fields.
enum class Storage { Raw, Typed, External };

struct ExternalRef {
    std::string location; // as written in the model
    uint64_t offset = 0;
    std::optional<uint64_t> length; // absent: the tensor's byte size is read from offset
    std::string checksum; // hex SHA-1, when present
    std::filesystem::path resolvedPath; // base dir / location, lexically normal
    std::shared_ptr<DataFile> file; // null when the reference failed validation
};

// A byte range of the .onnx file itself: a raw_data payload Model::load left in the file.
struct FileRange {
    uint64_t offset = 0;
    uint64_t length = 0;
    bool operator==(const FileRange&) const = default;
};

struct TensorInfo {
    std::string name;
    std::string scope;
    TensorKind kind = TensorKind::Initializer;
    int32_t dataType = 0;
    std::vector<int64_t> shape;
    std::optional<uint64_t> elements; // nullopt when dims are negative or overflow
    std::optional<uint64_t> bytes; // packed byte size; strings: sum of lengths
    Storage storage = Storage::Raw;
    ExternalRef external; // meaningful when storage == External
    // Storage::Raw whose raw_data is still in the .onnx file (proto->raw_data() is empty until
    // Model::materializeInline()); Model::read maps it.
    std::optional<FileRange> inlineRange;
    bool hasError = false; // some error-severity problem names this tensor
    // Why readers need this tensor's values while they build the graph (core/graph_build_inputs.h),
    // e.g. "the shape input of Reshape 'r1'"; empty when they do not. Such a tensor stays inline.
    std::string readAtGraphBuild;
    onnx::TensorProto* proto = nullptr; // owned by the Model

    bool isExternal() const { return storage == Storage::External; }
    bool mustStayInline() const { return !readAtGraphBuild.empty(); }
    uint64_t byteSize() const { return bytes.value_or(0); }
    // Stable identity within a model, used for diffs and problem reports.
    std::string qualifiedName() const { return scope + "/" + name; }
};

std::string_view kindName(TensorKind kind);
std::string_view storageName(Storage storage); // "raw", "typed", "external"

} // namespace repack
