#include "report.h"

#include "dtype.h"
#include "file_layout.h"
#include "model.h"

#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>

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
    j["shape"] = t.shape;
    j["elements"] = optionalNumber(t.elements);
    j["bytes"] = optionalNumber(t.bytes);
    j["storage"] = t.isExternal() ? "external" : "inline";
    if (t.isExternal()) {
        j["location"] = t.external.location;
        j["offset"] = t.external.offset;
        j["length"] = t.external.length.value_or(t.byteSize());
    } else {
        j["location"] = nullptr;
        j["offset"] = nullptr;
        j["length"] = nullptr;
    }
    return j;
}

Json placeJson(const TensorInfo& t)
{
    if (!t.isExternal())
        return Json{{"storage", "inline"}};
    return Json{{"storage", "external"}, {"location", t.external.location},
        {"offset", t.external.offset}, {"length", t.external.length.value_or(t.byteSize())}};
}

} // namespace

Json modelJson(const Model& model)
{
    const auto& proto = model.proto();
    Json opsets = Json::object();
    for (const auto& opset : proto.opset_import())
        opsets[opset.domain().empty() ? "ai.onnx" : opset.domain()] = opset.version();
    std::string producer = proto.producer_name();
    if (!proto.producer_version().empty())
        producer += (producer.empty() ? "" : " ") + proto.producer_version();
    return Json{{"path", model.path().string()}, {"bytes", model.fileBytes()},
        {"ir_version", proto.ir_version()}, {"producer", producer}, {"opsets", opsets}};
}

Json problemsJson(const std::vector<Problem>& problems)
{
    Json out = Json::array();
    for (const auto& p : problems)
        out.push_back({{"severity", severityName(p.severity)}, {"tensor", p.tensor},
            {"code", p.code}, {"message", p.message}});
    return out;
}

Json inspectJson(const Model& model, const std::vector<Problem>& folderProblems)
{
    Json tensors = Json::array();
    uint64_t inlineBytes = 0;
    uint64_t externalBytes = 0;
    for (const auto& t : model.tensors()) {
        tensors.push_back(tensorJson(t));
        (t.isExternal() ? externalBytes : inlineBytes) += t.byteSize();
    }
    std::vector<Problem> problems = model.problems();
    problems.insert(problems.end(), folderProblems.begin(), folderProblems.end());
    Json files = Json::array();
    for (const auto& f : computeLayout(model))
        files.push_back({{"location", f.location}, {"bytes", f.bytes},
            {"referenced_bytes", f.referencedBytes}, {"padding_bytes", f.paddingBytes},
            {"orphaned_bytes", f.orphanedBytes}, {"overlapping_bytes", f.overlappingBytes}});
    return Json{{"schema", kInspectSchema}, {"model", modelJson(model)},
        {"tensors", std::move(tensors)}, {"files", std::move(files)},
        {"totals",
            {{"tensors", model.tensors().size()}, {"inline_bytes", inlineBytes},
                {"external_bytes", externalBytes}}},
        {"problems", problemsJson(problems)}};
}

Json verifyJson(const Model& model, const std::vector<Problem>& problems)
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
    return Json{{"schema", kVerifySchema}, {"model", modelJson(model)}, {"ok", ok},
        {"external_tensors", external}, {"external_bytes", externalBytes},
        {"problems", problemsJson(problems)}};
}

Json diffJson(const Model& a, const Model& b, const std::vector<DiffEntry>& entries)
{
    Json out{{"schema", kDiffSchema}};
    for (DiffStatus status : {DiffStatus::Added, DiffStatus::Removed, DiffStatus::Moved,
             DiffStatus::StorageChanged, DiffStatus::ContentChanged, DiffStatus::Unchanged})
        out[std::string(diffStatusName(status))] = Json::array();
    for (const auto& e : entries) {
        Json item{{"scope", e.scope}, {"name", e.name}};
        if (e.a >= 0)
            item["a"] = placeJson(a.tensors()[static_cast<size_t>(e.a)]);
        if (e.b >= 0)
            item["b"] = placeJson(b.tensors()[static_cast<size_t>(e.b)]);
        out[std::string(diffStatusName(e.status))].push_back(std::move(item));
    }
    return out;
}

} // namespace repack
