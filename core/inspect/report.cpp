#include "report.h"

#include "core/dtype.h"
#include "core/json_stream.h"
#include "core/model/model.h"
#include "core/model/model_sources.h"
#include "core/plan/file_layout.h"
#include "core/plan/placement_plan.h"
#include "folder_inspect.h"

#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <ostream>

namespace repack {

using Json = nlohmann::ordered_json;

namespace {

Json optionalNumber(const std::optional<uint64_t>& value)
{
    return value ? Json(*value) : Json(nullptr);
}

Json tensorJson(const TensorInfo& t)
{
    Json j;
    j["name"] = t.name;
    j["scope"] = t.scope;
    j["kind"] = kindName(t.kind);
    const auto type = dtype::name(t.dataType);
    j["dtype"] = type ? std::string(*type) : "unknown(" + std::to_string(t.dataType) + ")";
    j["shape"] = t.shape.toVector();
    j["elements"] = optionalNumber(t.elements());
    j["bytes"] = optionalNumber(t.bytes);
    j["storage"] = t.isExternal() ? "external" : "inline";
    if (t.isExternal()) {
        j["location"] = t.external->location();
        j["offset"] = t.external->offset;
        j["length"] = t.external->length.value_or(t.byteSize());
    } else {
        j["location"] = nullptr;
        j["offset"] = nullptr;
        j["length"] = nullptr;
    }
    return j;
}

// tensorJson(t) as dump(2) lays it out at the depth of the report's tensors array, written
// straight into the stream's buffer from fragments made once: the keys with their separators and
// indentation. A report of a large model is mostly these rows.
class TensorText {
public:
    explicit TensorText(JsonStream& json)
    {
        const size_t depth = json.depth();
        const std::string member(json.newLine(depth + 1));
        const std::string element(json.newLine(depth + 2));
        for (size_t i = 0; i < kKeys.size(); ++i) {
            m_keys[i] = (i == 0 ? member.substr(1) : member) + '"' + kKeys[i] + "\": ";
            m_fixedBytes += m_keys[i].size();
        }
        m_element = element;
        m_shapeEnd = "\n" + member.substr(2) + ']';
        m_end = "\n" + std::string(json.newLine(depth)).substr(2) + '}';
        m_fixedBytes += m_shapeEnd.size() + m_end.size() + kScalarsBytes;
    }

    void write(JsonStream& json, const TensorInfo& t)
    {
        const std::string_view location
            = t.isExternal() ? std::string_view(t.external->location()) : std::string_view();
        // Each string quoted and escaped on its own; an inline tensor's location is "null".
        const size_t maxBytes = m_fixedBytes + JsonStream::stringBytes(t.name.size())
            + JsonStream::stringBytes(t.scope.size())
            + std::max(JsonStream::stringBytes(location.size()), std::string_view("null").size())
            + t.shape.size() * (m_element.size() + kNumberBytes);
        json.rendered(maxBytes, [&](char* out) { return render(out, t, location); });
    }

private:
    enum Key {
        Name,
        Scope,
        Kind,
        Dtype,
        Shape,
        Elements,
        Bytes,
        StorageKey,
        Location,
        Offset,
        Length
    };
    static constexpr std::array<const char*, 11> kKeys{"name", "scope", "kind", "dtype", "shape",
        "elements", "bytes", "storage", "location", "offset", "length"};
    static constexpr size_t kNumberBytes = 20; // a 64-bit number, "-" and 19 digits at most
    // All but the keys, the shape's dimensions and the escaped strings: "{", the shape's "[",
    // kind, dtype and storage quoted (at most "initializer", "unknown(-2147483648)" and
    // "external"), and four numbers or nulls.
    static constexpr size_t kScalarsBytes = 2 + (2 + 11) + (2 + 20) + (2 + 8) + 4 * kNumberBytes;

    char* render(char* out, const TensorInfo& t, std::string_view location) const
    {
        *out++ = '{';
        out = key(out, Name);
        out = JsonStream::writeString(out, t.name);
        out = key(out, Scope);
        out = JsonStream::writeString(out, t.scope);
        out = key(out, Kind);
        out = ascii(out, kindName(t.kind));
        out = key(out, Dtype);
        if (const auto type = dtype::name(t.dataType))
            out = ascii(out, *type);
        else
            out = ascii(out, "unknown(" + std::to_string(t.dataType) + ")");
        out = key(out, Shape);
        *out++ = '[';
        for (size_t i = 0; i < t.shape.size(); ++i) {
            out = put(out, std::string_view(m_element).substr(i == 0 ? 1 : 0));
            out = std::to_chars(out, out + kNumberBytes, t.shape[i]).ptr;
        }
        out = t.shape.empty() ? put(out, "]") : put(out, m_shapeEnd);
        out = key(out, Elements);
        out = optional(out, t.elements());
        out = key(out, Bytes);
        out = optional(out, t.bytes);
        out = key(out, StorageKey);
        out = ascii(out, t.isExternal() ? "external" : "inline");
        out = key(out, Location);
        if (t.isExternal())
            out = JsonStream::writeString(out, location);
        else
            out = put(out, "null");
        out = key(out, Offset);
        out = t.isExternal() ? std::to_chars(out, out + kNumberBytes, t.external->offset).ptr
                             : put(out, "null");
        out = key(out, Length);
        out = t.isExternal()
            ? std::to_chars(out, out + kNumberBytes, t.external->length.value_or(t.byteSize())).ptr
            : put(out, "null");
        return put(out, m_end);
    }

    static char* put(char* out, std::string_view text)
    {
        return std::copy(text.begin(), text.end(), out);
    }
    char* key(char* out, Key k) const { return put(out, m_keys[k]); }
    // Names of kinds, types and storage: plain ASCII, never escaped.
    static char* ascii(char* out, std::string_view text)
    {
        *out++ = '"';
        out = put(out, text);
        *out++ = '"';
        return out;
    }
    static char* optional(char* out, const Count& n)
    {
        return n ? std::to_chars(out, out + kNumberBytes, *n).ptr : put(out, "null");
    }

    std::array<std::string, kKeys.size()> m_keys;
    std::string m_element; // ",\n" and the indentation of a shape's dimensions
    std::string m_shapeEnd;
    std::string m_end;
    size_t m_fixedBytes = 0;
};

Json placeJson(const TensorInfo& t)
{
    if (!t.isExternal())
        return Json{{"storage", "inline"}};
    return Json{{"storage", "external"}, {"location", t.external->location()},
        {"offset", t.external->offset}, {"length", t.external->length.value_or(t.byteSize())}};
}

Json placeJson(const TensorPlace& place)
{
    if (!place.external)
        return Json{{"storage", "inline"}};
    return Json{{"storage", "external"}, {"location", place.location}, {"offset", place.offset},
        {"length", place.length}};
}

// The files on a server the model read, each with the version read (model_sources.h); for
// diff, `side` says which model ("a", "b").
void addSourcesJson(Json& list, const Model& model, const char* side = nullptr)
{
    for (const SourceVersion& version : remoteVersionsOf(model)) {
        Json source;
        if (side)
            source["side"] = side;
        source["name"] = version.name;
        source["version"] = version.version;
        source["bytes"] = version.bytes;
        list.push_back(std::move(source));
    }
}

Json modelJson(const Model& model)
{
    const ModelHeader& header = model.header();
    Json opsets = Json::object();
    for (const auto& [domain, version] : header.opsets)
        opsets[domain.empty() ? "ai.onnx" : domain] = version;
    std::string producer = header.producerName;
    if (!header.producerVersion.empty())
        producer += (producer.empty() ? "" : " ") + header.producerVersion;
    return Json{{"path", model.origin()}, {"bytes", model.fileBytes()},
        {"ir_version", header.irVersion}, {"producer", producer}, {"opsets", opsets}};
}

Json problemJson(const Problem& p)
{
    return Json{{"severity", severityName(p.severity)}, {"tensor", p.tensor}, {"code", p.code},
        {"message", p.message}};
}

Json fileJson(const FileLayout& f)
{
    Json json{{"location", f.location}, {"bytes", f.bytes}, {"referenced_bytes", f.referencedBytes},
        {"padding_bytes", f.paddingBytes}, {"orphaned_bytes", f.orphanedBytes},
        {"overlapping_bytes", f.overlappingBytes}, {"shared_bytes", f.sharedBytes},
        {"format", f.headerBytes ? "safetensors" : "raw"}, {"header_bytes", f.headerBytes}};
    addAlignmentJson(json, f);
    return json;
}

Json totalsJson(const Model& model)
{
    uint64_t inlineBytes = 0;
    uint64_t externalBytes = 0;
    for (const auto& t : model.tensors())
        (t.isExternal() ? externalBytes : inlineBytes) += t.byteSize();
    return Json{{"tensors", model.tensors().size()}, {"inline_bytes", inlineBytes},
        {"external_bytes", externalBytes}};
}

// The model's own problems, then the folder's.
template <typename Visit>
void forEachProblem(const Model& model, const std::vector<Problem>& folderProblems, Visit visit)
{
    for (const auto& p : model.problems())
        visit(p);
    for (const auto& p : folderProblems)
        visit(p);
}

} // namespace

void writeInspectJson(std::ostream& out, const Model& model,
    const std::vector<Problem>& folderProblems, uint64_t alignment)
{
    JsonStream json(out);
    json.beginObject();
    json.field("schema", kInspectSchema);
    json.field("model", modelJson(model));
    json.key("tensors");
    json.beginArray();
    TensorText text(json);
    for (const auto& t : model.tensors())
        text.write(json, t);
    json.endArray();
    json.key("files");
    json.beginArray();
    for (const auto& f : computeLayout(model, alignment, LayoutDetail::Totals))
        json.value(fileJson(f));
    json.endArray();
    json.field("totals", totalsJson(model));
    json.key("problems");
    json.beginArray();
    forEachProblem(model, folderProblems, [&](const Problem& p) { json.value(problemJson(p)); });
    json.endArray();
    json.endObject();
    out << '\n';
}

Json inspectJson(const Model& model, const std::vector<Problem>& folderProblems, uint64_t alignment)
{
    Json tensors = Json::array();
    for (const auto& t : model.tensors())
        tensors.push_back(tensorJson(t));
    Json files = Json::array();
    for (const auto& f : computeLayout(model, alignment, LayoutDetail::Totals))
        files.push_back(fileJson(f));
    Json problems = Json::array();
    forEachProblem(
        model, folderProblems, [&](const Problem& p) { problems.push_back(problemJson(p)); });
    return Json{{"schema", kInspectSchema}, {"model", modelJson(model)},
        {"tensors", std::move(tensors)}, {"files", std::move(files)}, {"totals", totalsJson(model)},
        {"problems", std::move(problems)}};
}

void writeVerifyJson(std::ostream& out, const Model& model, const std::vector<Problem>& problems)
{
    uint64_t externalBytes = 0;
    size_t external = 0;
    for (const auto& t : model.tensors())
        if (t.isExternal()) {
            ++external;
            externalBytes += t.byteSize();
        }
    const bool ok = std::none_of(problems.begin(), problems.end(),
        [](const Problem& p) { return p.severity == Severity::Error; });
    JsonStream json(out);
    json.beginObject();
    json.field("schema", kVerifySchema);
    json.field("model", modelJson(model));
    json.field("ok", ok);
    json.field("external_tensors", external);
    json.field("external_bytes", externalBytes);
    json.key("problems");
    json.beginArray();
    for (const auto& p : problems)
        json.value(problemJson(p));
    json.endArray();
    Json sources = Json::array();
    addSourcesJson(sources, model);
    json.field("sources", sources);
    json.endObject();
    out << '\n';
}

void writeDiffJson(
    std::ostream& out, const Model& a, const Model& b, const std::vector<DiffEntry>& entries)
{
    JsonStream json(out);
    json.beginObject();
    json.field("schema", kDiffSchema);
    for (std::string_view key : kChangeKeys) {
        json.key(key);
        json.beginArray();
        for (const auto& e : entries) {
            if (changeKey(e.kind) != key)
                continue;
            Json item{{"scope", e.scope}, {"name", e.name}};
            if (e.a >= 0)
                item["a"] = placeJson(a.tensors()[static_cast<size_t>(e.a)]);
            if (e.b >= 0)
                item["b"] = placeJson(b.tensors()[static_cast<size_t>(e.b)]);
            json.value(item);
        }
        json.endArray();
    }
    Json sources = Json::array();
    addSourcesJson(sources, a, "a");
    addSourcesJson(sources, b, "b");
    json.field("sources", sources);
    json.endObject();
    out << '\n';
}

void writePlanDiffJson(std::ostream& out, const PlanDiff& diff)
{
    JsonStream json(out);
    json.beginObject();
    json.field("schema", kPlanDiffSchema);
    writePlanDiffFields(json, diff);
    json.endObject();
    out << '\n';
}

void writePlanDiffFields(JsonStream& json, const PlanDiff& diff)
{
    for (std::string_view key : kChangeKeys) {
        json.key(key);
        json.beginArray();
        for (const PlanDiffTensor& t : diff.tensors) {
            if (changeKey(t.kind) != key)
                continue;
            json.value(Json{{"scope", t.scope}, {"name", t.name}, {"a", placeJson(t.before)},
                {"b", placeJson(t.after)}});
        }
        json.endArray();
    }
    json.key("files");
    json.beginArray();
    for (const PlanDiffFile& f : diff.files) {
        Json item{{"location", f.location}, {"change", planFileChange(f)}};
        if (f.before)
            item["before"] = Json{{"bytes", f.bytesBefore}, {"padding_bytes", f.paddingBefore},
                {"orphaned_bytes", f.orphanedBefore}};
        if (f.after)
            item["after"] = Json{{"bytes", f.bytesAfter}, {"padding_bytes", f.paddingAfter},
                {"orphaned_bytes", f.orphanedAfter}};
        json.value(item);
    }
    json.endArray();
    json.field("totals",
        Json{{"tensors", diff.tensors.size()},
            {"changed", diff.tensors.size() - diff.count(ChangeKind::Unchanged)},
            {"to_inline_bytes", diff.toInlineBytes}, {"to_external_bytes", diff.toExternalBytes}});
}

Json folderJson(const FolderInspection& folder)
{
    Json models = Json::array();
    for (const FolderModel& m : folder.models) {
        if (!m.model) {
            const auto error = std::find_if(
                folder.problems.begin(), folder.problems.end(), [&](const FolderProblem& p) {
                    return p.model == m.name && p.code == code::ModelUnreadable;
                });
            models.push_back(Json{{"path", m.name}, {"tensors", nullptr}, {"inline_bytes", nullptr},
                {"external_bytes", nullptr}, {"files", Json::array()}, {"loaders", nullptr},
                {"error", error == folder.problems.end() ? "" : error->message}});
            continue;
        }
        models.push_back(
            Json{{"path", m.name}, {"tensors", m.tensors}, {"inline_bytes", m.inlineBytes},
                {"external_bytes", m.externalBytes}, {"files", m.files},
                {"loaders",
                    Json{{"onnx", m.loaders.onnx}, {"onnxruntime", m.loaders.onnxRuntime},
                        {"onnx_ir", m.loaders.onnxIr}}}});
    }
    Json files = Json::array();
    for (const FolderFile& f : folder.files)
        files.push_back(Json{{"location", f.location}, {"bytes", f.bytes}, {"used_by", f.usedBy}});
    Json shared = Json::array();
    for (const SharedContent& c : folder.shared) {
        Json tensors = Json::array();
        for (const SharedTensor& t : c.tensors)
            tensors.push_back(Json{{"model", t.model}, {"scope", t.scope}, {"name", t.name}});
        shared.push_back(
            Json{{"bytes", c.bytes}, {"copies", c.copies}, {"tensors", std::move(tensors)}});
    }
    Json problems = Json::array();
    for (const FolderProblem& p : folder.problems)
        problems.push_back(Json{{"severity", severityName(p.severity)}, {"model", p.model},
            {"tensor", p.tensor}, {"code", p.code}, {"message", p.message}});
    return Json{{"schema", kFolderSchema}, {"folder", folder.folder.string()},
        {"models", std::move(models)}, {"files", std::move(files)}, {"shared", std::move(shared)},
        {"duplicated_bytes", folder.duplicatedBytes}, {"problems", std::move(problems)}};
}

void writeFolderJson(std::ostream& out, const FolderInspection& folder)
{
    out << jsonText(folderJson(folder)) << '\n';
}

} // namespace repack
