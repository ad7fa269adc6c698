#include "placement_plan.h"

#include "core/dtype.h"
#include "core/json_stream.h"
#include "core/model/model.h"
#include "file_layout.h"
#include "save_plan.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>

namespace repack {

using Json = nlohmann::ordered_json;

namespace {

// Scope and name joined so that no two different pairs give the same key.
std::string tensorKey(std::string_view scope, std::string_view name)
{
    std::string key(scope);
    key += '\0';
    key += name;
    return key;
}

// "[json.exception.parse_error.101] parse error at line 1, ..." without the bracketed id.
std::string parseMessage(const char* what)
{
    std::string_view text(what);
    if (const auto end = text.find("] "); text.starts_with('[') && end != text.npos)
        text.remove_prefix(end + 2);
    return std::string(text);
}

// A value of a plan file as an error message shows it: scalars as JSON, arrays and objects by
// kind (dumping a hostile file's million nested arrays recursed once per level, past the stack).
std::string shown(const Json& value)
{
    if (value.is_structured())
        return value.is_array() ? "an array" : "an object";
    return value.dump();
}

} // namespace

namespace {

Json plannedTensorJson(const TensorInfo& tensor, const PlannedTensor& p, const SavePlan& plan)
{
    Json t{{"scope", tensor.scope}, {"name", tensor.name},
        {"storage", p.external ? "external" : "inline"}};
    if (p.external) {
        t["location"] = plan.files[static_cast<size_t>(p.file)];
        t["offset"] = p.offset;
        t["length"] = p.length;
    } else if (tensor.mustStayInline()) {
        t["kept_inline"] = *tensor.readAtGraphBuild; // whatever the threshold or plan (SPEC 5c)
    }
    return t;
}

// A planned file's entry: its size, and its gaps told apart as inspect tells them, with the
// alignment they were counted against (the plan's: SPEC 6).
Json planFileJson(const SavePlan& plan, size_t f)
{
    const FileLayout layout = plannedLayout(plan, f);
    Json json{{"location", plan.files[f]}, {"bytes", layout.bytes},
        {"padding_bytes", layout.paddingBytes}, {"orphaned_bytes", layout.orphanedBytes}};
    addAlignmentJson(json, layout);
    if (layout.headerBytes)
        json["header_bytes"] = layout.headerBytes; // a safetensors header (SaveOptions::format)
    return json;
}

} // namespace

void addAlignmentJson(Json& entry, const FileLayout& layout)
{
    entry["alignment"] = layout.alignment;
    entry["alignment_from"] = "option";
}

Json planJson(const Model& model, const SavePlan& plan, const std::filesystem::path& modelPath)
{
    const auto& tensors = model.tensors();
    Json list = Json::array();
    for (size_t i = 0; i < tensors.size() && i < plan.tensors.size(); ++i)
        list.push_back(plannedTensorJson(tensors[i], plan.tensors[i], plan));
    Json files = Json::array();
    for (size_t f = 0; f < plan.files.size(); ++f)
        files.push_back(planFileJson(plan, f));
    return Json{{"schema", kPlanSchema}, {"model", modelPath.string()},
        {"tensors", std::move(list)}, {"files", std::move(files)}};
}

void writePlanJson(std::ostream& out, const Model& model, const SavePlan& plan,
    const std::filesystem::path& modelPath)
{
    const auto& tensors = model.tensors();
    JsonStream json(out);
    json.beginObject();
    json.field("schema", kPlanSchema);
    json.field("model", modelPath.string());
    json.key("tensors");
    json.beginArray();
    for (size_t i = 0; i < tensors.size() && i < plan.tensors.size(); ++i)
        json.value(plannedTensorJson(tensors[i], plan.tensors[i], plan));
    json.endArray();
    json.key("files");
    json.beginArray();
    for (size_t f = 0; f < plan.files.size(); ++f)
        json.value(planFileJson(plan, f)); // shared ranges counted once
    json.endArray();
    json.endObject();
    out << '\n';
}

std::string planFileText(
    const Model& model, const SavePlan& plan, const std::filesystem::path& modelPath)
{
    std::ostringstream text;
    writePlanJson(text, model, plan, modelPath);
    return std::move(text).str();
}

Result<std::vector<TensorPlacement>> readPlan(
    const Model& model, std::string_view jsonText, std::string_view fileName)
{
    const std::string file(fileName);
    Json doc;
    try {
        doc = Json::parse(jsonText);
    } catch (const Json::exception& e) { // parse_error, or out_of_range for 1E400
        return Error::corrupt(
            file + ": not a plan file, the JSON is malformed: " + parseMessage(e.what()));
    }
    if (!doc.is_object())
        return Error::corrupt(file + ": not a plan file: expected a JSON object with \"schema\": \""
            + kPlanSchema + "\"");
    const auto schema = doc.find("schema");
    if (schema == doc.end() || !schema->is_string() || *schema != kPlanSchema)
        return Error::corrupt(file + ": not a plan file: \"schema\" is "
            + (schema == doc.end() ? std::string("missing") : shown(*schema)) + ", expected \""
            + kPlanSchema + "\"");
    const auto list = doc.find("tensors");
    if (list == doc.end() || !list->is_array())
        return Error::corrupt(
            file + ": \"tensors\" must be an array of {\"scope\", \"name\", \"storage\"}");

    const auto& tensors = model.tensors();
    std::unordered_map<std::string, size_t> index; // scope + name -> tensor
    std::unordered_map<std::string, size_t> copies; // keys the model has more than once
    for (size_t i = 0; i < tensors.size(); ++i)
        if (!index.emplace(tensorKey(tensors[i].scope, tensors[i].name), i).second)
            ++copies[tensorKey(tensors[i].scope, tensors[i].name)];

    std::vector<TensorPlacement> plan(tensors.size());
    std::vector<size_t> namedBy(tensors.size(), 0); // 1 + entry number that named the tensor
    for (size_t n = 0; n < list->size(); ++n) {
        const Json& entry = (*list)[n];
        const std::string where = file + ": tensors[" + std::to_string(n) + "]";
        if (!entry.is_object())
            return Error::corrupt(
                where + ": expected an object with \"scope\", \"name\", \"storage\"");
        const auto scope = entry.find("scope");
        const auto name = entry.find("name");
        if (scope == entry.end() || !scope->is_string() || name == entry.end()
            || !name->is_string())
            return Error::corrupt(where + ": needs a string \"scope\" and a string \"name\"");
        const std::string qualified = scope->get<std::string>() + "/" + name->get<std::string>();
        const std::string tensor = where + " (" + qualified + ")";
        const std::string key = tensorKey(scope->get<std::string>(), name->get<std::string>());
        const auto found = index.find(key);
        if (found == index.end())
            return Error::usage(tensor + ": the model has no tensor '" + name->get<std::string>()
                + "' in scope '" + scope->get<std::string>() + "'");
        if (const auto twice = copies.find(key); twice != copies.end())
            return Error::usage(tensor + ": the model has " + std::to_string(twice->second + 1)
                + " tensors with this scope and name; a plan cannot tell them apart");
        const size_t i = found->second;
        if (namedBy[i])
            return Error::usage(
                tensor + ": named twice, first by tensors[" + std::to_string(namedBy[i] - 1) + "]");
        namedBy[i] = n + 1;

        const auto storage = entry.find("storage");
        if (storage == entry.end() || !storage->is_string()
            || (*storage != "inline" && *storage != "external"))
            return Error::usage(tensor + ": \"storage\" is "
                + (storage == entry.end() ? std::string("missing") : shown(*storage))
                + ", expected \"inline\" or \"external\"");
        if (*storage == "inline") {
            plan[i] = {Placement::Inline};
            continue;
        }
        if (tensors[i].dataType == dtype::String)
            return Error::usage(tensor + ": STRING tensors cannot be stored externally");
        std::string location;
        if (const auto loc = entry.find("location"); loc != entry.end() && !loc->is_null()) {
            if (!loc->is_string())
                return Error::usage(
                    tensor + ": \"location\" must be a data file name, found " + shown(*loc));
            location = loc->get<std::string>();
        }
        plan[i] = {Placement::External, std::move(location)};
    }
    return plan;
}

Result<std::vector<TensorPlacement>> readPlanFile(
    const Model& model, const std::filesystem::path& file)
{
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    if (in)
        text << in.rdbuf();
    if (!in || in.bad())
        return Error::io(
            "cannot read the plan file " + file.string() + ": " + std::strerror(errno));
    return readPlan(model, text.str(), file.string());
}

} // namespace repack
