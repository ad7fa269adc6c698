// Target "tensor_index": any bytes through indexTensors (the wire-level walk Model::load
// relies on), checked against protobuf itself. Whenever protobuf parses the bytes as a
// ModelProto, the index succeeds and lists exactly tensorProtos()'s tensors, in order, with
// protobuf's name, data_type, dims, storage, external_data keys, raw_data bytes and typed
// fields; it says the same (tensors, problems, header) as the index of protobuf's own
// serialization of its parse; and Model::load then loadProtos() bind every tensor to its proto.
// The index never reads outside the input (ASan sees it as an exactly-sized heap buffer), and
// every range it returns lies inside it, whether protobuf parses the bytes or not.
#include "fuzz_support.h"

#include "core/model/external_reference.h"
#include "core/model/model.h"
#include "core/model/model_start.h"
#include "core/model/tensor_index.h"
#include "core/model/tensor_protos.h"

#include <onnx/onnx_pb.h>

#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

using namespace repack;
using fuzz::require;

std::string_view textAt(std::span<const std::byte> bytes, const FileRange& r)
{
    return {reinterpret_cast<const char*>(bytes.data()) + r.offset, size_t(r.length)};
}

bool inside(const FileRange& r, size_t size)
{
    return r.offset <= size && r.length <= size - r.offset;
}

std::string where(size_t i, const TensorInfo& t)
{
    return "tensor " + std::to_string(i) + " '" + t.qualifiedName() + "': ";
}

// What parseExternalKeys makes of the proto's own external_data entries.
ExternalRef externalOf(const onnx::TensorProto& p, const TensorInfo& indexed)
{
    std::vector<std::pair<std::string_view, std::string_view>> entries;
    for (const auto& e : p.external_data())
        entries.emplace_back(e.key(), e.value());
    const bool holdsData = p.has_raw_data() || p.float_data_size() || p.int32_data_size()
        || p.string_data_size() || p.int64_data_size() || p.double_data_size()
        || p.uint64_data_size();
    TensorInfo info;
    info.dataType = indexed.dataType;
    info.bytes = indexed.bytes;
    std::vector<Problem> ignored;
    DataLocations locations;
    parseExternalKeys(info, {entries, holdsData}, locations, ignored);
    return *info.external;
}

void sameExternal(const ExternalRef& a, const ExternalRef& b, const std::string& what)
{
    require(a.location() == b.location(),
        what + "external location '" + a.location() + "' vs '" + b.location() + "'");
    require(a.hasLocation() == b.hasLocation(), what + "a 'location' key in one only");
    require(a.offset == b.offset, what + "external offset differs");
    require(a.length == b.length, what + "external length differs");
    require(*a.checksum == *b.checksum, what + "external checksum differs");
}

// The index against protobuf's parse, tensor by tensor.
void checkAgainstProtos(
    std::span<const std::byte> file, const TensorIndex& index, onnx::ModelProto& parsed)
{
    require(index.hasGraph == parsed.has_graph(), "hasGraph differs from protobuf's has_graph");
    require(index.functionCount == size_t(parsed.functions_size()),
        "functionCount differs from protobuf's");
    const std::vector<onnx::TensorProto*> protos = tensorProtos(parsed);
    require(index.tensors.size() == protos.size(),
        "the index lists " + std::to_string(index.tensors.size()) + " tensors, protobuf "
            + std::to_string(protos.size()));
    std::map<size_t, const std::vector<FileRange>*> typed;
    for (const auto& [position, ranges] : index.typedSpans)
        typed.emplace(position, &ranges);
    for (size_t i = 0; i < protos.size(); ++i) {
        const TensorInfo& t = index.tensors[i];
        const onnx::TensorProto& p = *protos[i];
        const std::string what = where(i, t);
        if (!p.name().empty())
            require(t.name == p.name(), what + "protobuf names it '" + p.name() + "'");
        require(t.dataType == p.data_type(),
            what + "data_type " + std::to_string(t.dataType) + ", protobuf "
                + std::to_string(p.data_type()));
        require(t.shape == std::vector<int64_t>(p.dims().begin(), p.dims().end()),
            what + "dims differ from protobuf's");
        const bool external = p.data_location() == onnx::TensorProto::EXTERNAL;
        require(t.isExternal() == external, what + "EXTERNAL or not differs from protobuf");
        require((t.storage == Storage::Raw) == (!external && p.has_raw_data()),
            what + "Raw storage differs from protobuf's has_raw_data");
        sameExternal(*t.external, external ? externalOf(p, t) : ExternalRef{}, what);
        require(t.inlineRange.has_value() == (t.storage == Storage::Raw),
            what + "an inline range without raw storage, or none with it");
        if (t.inlineRange)
            require(textAt(file, *t.inlineRange) == p.raw_data(),
                what + "raw_data bytes differ from protobuf's ("
                    + std::to_string(t.inlineRange->length) + " vs "
                    + std::to_string(p.raw_data().size()) + " bytes)");
        const auto spans = typed.find(i);
        require((spans != typed.end()) == (t.storage == Storage::Typed),
            what + "typed spans without typed storage, or none with it");
        if (spans != typed.end()) {
            // Model::read parses the typed fields from these ranges.
            std::string joined;
            for (const FileRange& r : *spans->second)
                joined += textAt(file, r);
            onnx::TensorProto merged;
            require(merged.ParseFromString(joined), what + "its typed spans do not parse");
            require(merged.SerializeAsString() == p.SerializeAsString(),
                what + "its typed spans parse to another TensorProto than protobuf's");
        }
    }
}

// Two indexes of one model, from different bytes: everything but the byte ranges agrees.
void checkSameIndex(std::span<const std::byte> file, const TensorIndex& a,
    std::span<const std::byte> canonical, const TensorIndex& b)
{
    const std::string what = "against the index of protobuf's serialization: ";
    require(a.header.irVersion == b.header.irVersion, what + "ir_version differs");
    require(a.header.producerName == b.header.producerName, what + "producer_name differs");
    require(
        a.header.producerVersion == b.header.producerVersion, what + "producer_version differs");
    require(a.header.opsets == b.header.opsets, what + "opsets differ");
    require(a.tensors.size() == b.tensors.size(), what + "tensor count differs");
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        const TensorInfo& x = a.tensors[i];
        const TensorInfo& y = b.tensors[i];
        const std::string at = what + where(i, x);
        require(x.name == y.name && x.scope == y.scope, at + "named '" + y.qualifiedName() + "'");
        require(x.kind == y.kind, at + "kind differs");
        require(x.elements() == y.elements() && x.bytes == y.bytes, at + "size differs");
        require(x.storage == y.storage, at + "storage differs");
        sameExternal(*x.external, *y.external, at);
        require(x.inlineRange.has_value() == y.inlineRange.has_value(), at + "inline range");
        if (x.inlineRange)
            require(textAt(file, *x.inlineRange) == textAt(canonical, *y.inlineRange),
                at + "raw_data bytes differ");
        require(x.unusedInitializer == y.unusedInitializer, at + "unusedInitializer differs");
        require(*x.readAtGraphBuild == *y.readAtGraphBuild,
            at + "readAtGraphBuild '" + *x.readAtGraphBuild + "' vs '" + *y.readAtGraphBuild + "'");
    }
    require(a.problems.size() == b.problems.size(),
        what + std::to_string(a.problems.size()) + " problems vs "
            + std::to_string(b.problems.size()));
    for (size_t i = 0; i < a.problems.size(); ++i)
        require(a.problems[i].severity == b.problems[i].severity
                && a.problems[i].tensor == b.problems[i].tensor
                && a.problems[i].code == b.problems[i].code
                && a.problems[i].message == b.problems[i].message,
            what + "problem '" + a.problems[i].message + "' vs '" + b.problems[i].message + "'");
}

// Model::load (the index) and loadProtos (protobuf) of the input as a file agree.
void checkModel(const uint8_t* data, size_t size, const onnx::ModelProto& parsed)
{
    static const std::filesystem::path file = fuzz::scratchDir("tensor_index") / "model.onnx";
    fuzz::writeFile(file, fuzz::bytesOf(data, size));
    auto loaded = Model::load(file);
    if (!parsed.has_graph() && parsed.functions_size() == 0)
        return; // not a model to Model::load, by design
    // Also by design: protobuf takes a first field no ModelProto has as an unknown one, but no
    // writer of ONNX begins a model so, and Model::load refuses it as another format (a web
    // page, an archive) at its first bytes. It must refuse it for that reason, as a Format error.
    const Status start = checkModelStart(std::as_bytes(std::span(data, size)), size, file.string());
    if (!start.ok()) {
        require(!loaded.ok() && loaded.error().kind == ErrorKind::Format,
            "Model::load takes what checkModelStart refuses: " + start.error().message);
        return;
    }
    require(loaded.ok(),
        "Model::load refuses what protobuf parses: "
            + (loaded ? std::string() : loaded.error().message));
    Model& model = **loaded;
    const Status protos = model.loadProtos();
    require(protos.ok(), "loadProtos fails: " + (protos ? std::string() : protos.error().message));
    for (const TensorInfo& t : model.tensors()) {
        require(t.proto != nullptr, t.qualifiedName() + ": no proto bound");
        require(t.proto->data_type() == t.dataType
                && std::vector<int64_t>(t.proto->dims().begin(), t.proto->dims().end()) == t.shape,
            t.qualifiedName() + ": bound to a proto of another dtype or shape");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    // A copy of exactly `size` bytes: reading one past it is a heap-buffer-overflow.
    const std::vector<std::byte> file(
        reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
    const RawPayloadRule payload = [&](size_t, FileRange p) {
        require(inside(p, size), "a raw_data payload outside the input");
        return std::optional<FileRange>(p);
    };
    const ReleaseRule release = [&](uint64_t offset, uint64_t length) {
        require(inside({offset, length}, size), "a released range outside the input");
    };
    auto index = indexTensors(file, "fuzz", payload, release);
    if (index) {
        for (const auto& [position, ranges] : index->typedSpans) {
            require(position < index->tensors.size(), "typed spans of no tensor");
            for (const FileRange& r : ranges)
                require(inside(r, size), "a typed span outside the input");
        }
    } else {
        require(!index.error().message.empty(), "an index error without a message");
    }

    onnx::ModelProto parsed;
    if (size > size_t(std::numeric_limits<int>::max()) || !parsed.ParseFromArray(data, int(size)))
        return 0; // the index may accept more: it does not read every field
    require(index.ok(),
        "the index refuses what protobuf parses: "
            + (index ? std::string() : index.error().message));
    checkAgainstProtos(file, *index, parsed);

    std::string canonical;
    require(parsed.SerializeToString(&canonical), "protobuf cannot serialize its own parse");
    const auto canonicalBytes = std::as_bytes(std::span(canonical.data(), canonical.size()));
    auto again = indexTensors(canonicalBytes, "canonical",
        [](size_t, FileRange p) { return std::optional<FileRange>(p); });
    require(again.ok(),
        "the index refuses protobuf's serialization: "
            + (again ? std::string() : again.error().message));
    checkSameIndex(file, *index, canonicalBytes, *again);

    checkModel(data, size, parsed);
    return 0;
}
