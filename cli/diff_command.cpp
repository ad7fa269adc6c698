#include "cli.h"
#include "commands.h"

#include "core/diff.h"
#include "core/model.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <map>
#include <memory>

namespace repack::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr DiffStatus kStatuses[] = {DiffStatus::Added, DiffStatus::Removed, DiffStatus::Moved,
    DiffStatus::StorageChanged, DiffStatus::ContentChanged, DiffStatus::Unchanged};

Json placeJson(const TensorInfo& t)
{
    if (!t.isExternal())
        return Json{{"storage", "inline"}};
    return Json{{"storage", "external"}, {"location", t.external.location},
        {"offset", t.external.offset}, {"length", t.external.length.value_or(t.byteSize())}};
}

std::string placeText(const TensorInfo& t)
{
    if (!t.isExternal())
        return "inline";
    return t.external.location + "@" + std::to_string(t.external.offset);
}

int diff(const std::string& pathA, const std::string& pathB, bool json)
{
    auto a = Model::load(pathA);
    auto b = a ? Model::load(pathB) : Result<std::unique_ptr<Model>>(Error{});
    if (!a || !b) {
        std::cerr << "onnx-repack: " << (!a ? a.error() : b.error()).message << '\n';
        return Failed;
    }
    auto entries = diffModels(**a, **b);
    if (!entries) {
        std::cerr << "onnx-repack: " << entries.error().message << '\n';
        return Failed;
    }
    if (json) {
        Json out{{"schema", "onnx-repack/diff/1"}};
        for (DiffStatus status : kStatuses)
            out[std::string(diffStatusName(status))] = Json::array();
        for (const auto& e : *entries) {
            Json item{{"scope", e.scope}, {"name", e.name}};
            if (e.a >= 0)
                item["a"] = placeJson((*a)->tensors()[static_cast<size_t>(e.a)]);
            if (e.b >= 0)
                item["b"] = placeJson((*b)->tensors()[static_cast<size_t>(e.b)]);
            out[std::string(diffStatusName(e.status))].push_back(std::move(item));
        }
        std::cout << out.dump(2) << '\n';
        return Ok;
    }
    std::map<DiffStatus, size_t> counts;
    for (const auto& e : *entries) {
        ++counts[e.status];
        if (e.status == DiffStatus::Unchanged)
            continue;
        std::cout << diffStatusName(e.status) << "  " << e.scope << "/" << e.name;
        if (e.a >= 0 && e.b >= 0)
            std::cout << "  " << placeText((*a)->tensors()[static_cast<size_t>(e.a)]) << " -> "
                      << placeText((*b)->tensors()[static_cast<size_t>(e.b)]);
        std::cout << '\n';
    }
    for (DiffStatus status : kStatuses)
        std::cout << (status == DiffStatus::Added ? "" : ", ") << counts[status] << ' '
                  << diffStatusName(status);
    std::cout << '\n';
    return Ok;
}

} // namespace

Command addDiff(CLI::App& app)
{
    auto* sub = app.add_subcommand("diff", "Compare where two models keep their tensors");
    auto a = std::make_shared<std::string>();
    auto b = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    sub->add_option("A", *a, "The first model")->required();
    sub->add_option("B", *b, "The second model")->required();
    sub->add_flag("--json", *json, "Print one JSON object (schema onnx-repack/diff/1)");
    return {sub, [a, b, json] { return diff(*a, *b, *json); }};
}

} // namespace repack::cli
