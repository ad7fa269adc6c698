// A validation finding about one tensor (or the model), with a stable machine-readable code.
#pragma once

#include <string>
#include <string_view>

namespace repack {

enum class Severity { Error, Warning };

// Stable problem codes; JSON output and tests rely on these strings.
namespace code {
inline constexpr std::string_view EmptyLocation = "empty-location";
inline constexpr std::string_view MissingLocation = "missing-location";
inline constexpr std::string_view AbsoluteLocation = "absolute-location";
// A location with a NUL byte: C readers cut it there and read another file; onnx refuses it.
inline constexpr std::string_view LocationNul = "location-nul";
inline constexpr std::string_view LocationEscapes = "location-escapes";
inline constexpr std::string_view SymlinkEscapes = "symlink-escapes";
inline constexpr std::string_view MemoryAddress = "memory-address";
inline constexpr std::string_view MissingFile = "missing-file";
inline constexpr std::string_view NotRegularFile = "not-regular-file";
inline constexpr std::string_view UnreadableFile = "unreadable-file";
inline constexpr std::string_view BadOffset = "bad-offset";
inline constexpr std::string_view BadLength = "bad-length";
inline constexpr std::string_view OutOfRange = "out-of-range";
inline constexpr std::string_view LengthMismatch = "length-mismatch";
inline constexpr std::string_view ExternalWithData = "external-with-data";
inline constexpr std::string_view ExternalString = "external-string";
inline constexpr std::string_view UnknownKey = "unknown-key";
inline constexpr std::string_view ExternalDataIgnored = "external-data-ignored";
inline constexpr std::string_view BadDims = "bad-dims";
inline constexpr std::string_view SizeOverflow = "size-overflow";
inline constexpr std::string_view UnknownDtype = "unknown-dtype";
inline constexpr std::string_view InlineSizeMismatch = "inline-size-mismatch";
inline constexpr std::string_view ChecksumMismatch = "checksum-mismatch";
inline constexpr std::string_view ReadFailed = "read-failed";
// The data file is not the one validated when the model was opened (replaced or modified).
inline constexpr std::string_view FileChanged = "file-changed";
inline constexpr std::string_view InterruptedSave = "interrupted-save";
// Housekeeping of the model's folder (SPEC 5a), warnings naming the file and its size.
inline constexpr std::string_view LeftoverTemporary = "leftover-temporary";
inline constexpr std::string_view UnusedDataFile = "unused-data-file";
inline constexpr std::string_view HardLinkedData = "hard-linked-data";
// Another model of the folder could not be read: it may use any file there, so none is called
// a leftover or unused, and replacing one needs consent.
inline constexpr std::string_view UnreadableSibling = "unreadable-sibling";
// Two tensors of one scope with one name: onnx.checker rejects duplicate
// initializers (an error); for attribute tensors only diffs and plans cannot tell them apart.
inline constexpr std::string_view DuplicateName = "duplicate-name";
// The storage audit of `inspect` (core/inspect/audit.h), warnings with the fix.
inline constexpr std::string_view NotMappable = "not-mappable";
inline constexpr std::string_view NotMappableOnWindows = "not-mappable-on-windows";
inline constexpr std::string_view BrowserFileLimit = "browser-file-limit";
inline constexpr std::string_view ProtobufNearLimit = "protobuf-near-limit";
inline constexpr std::string_view UnusedInitializer = "unused-initializer";
inline constexpr std::string_view DuplicateBytes = "duplicate-bytes";
inline constexpr std::string_view OrphanedBytes = "orphaned-bytes";
// Data files that are also .safetensors files (core/model/safetensors.h).
inline constexpr std::string_view SafetensorsMismatch = "safetensors-mismatch";
inline constexpr std::string_view SafetensorsHeader = "safetensors-header";
// An external tensor whose values readers need while building the graph
// (core/model/graph_build_inputs.h): ONNX Runtime and onnx.shape_inference refuse the model.
inline constexpr std::string_view ExternalGraphBuildInput = "external-graph-build-input";
// A folder of graphs (core/inspect/folder_inspect.h): content stored more than once across
// them, data paths a common loader refuses, a .onnx that does not load.
inline constexpr std::string_view DuplicatedContent = "duplicated-content";
inline constexpr std::string_view LoaderSymlinkedData = "loader-symlinked-data";
inline constexpr std::string_view LoaderHardLinkedData = "loader-hard-linked-data";
inline constexpr std::string_view LoaderDataOutside = "loader-data-outside";
inline constexpr std::string_view ModelUnreadable = "model-unreadable";
} // namespace code

struct Problem {
    Severity severity = Severity::Error;
    std::string tensor; // "scope/name" of the tensor, empty for model-wide problems
    std::string code; // one of repack::code
    std::string message;
};

inline std::string_view severityName(Severity s)
{
    return s == Severity::Error ? "error" : "warning";
}

} // namespace repack
