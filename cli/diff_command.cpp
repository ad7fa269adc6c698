#include "cli.h"
#include "command_token.h"
#include "commands.h"
#include "core/remote/model_source.h"
#include "terminal_text.h"

#include "core/inspect/diff.h"
#include "core/inspect/report.h"
#include "core/model/model.h"
#include "core/model/model_sources.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>

namespace repack::cli {
namespace {

std::string placeText(const TensorInfo& t)
{
    if (!t.isExternal())
        return "inline";
    return printable(t.external->location()) + "@" + std::to_string(t.external->offset);
}

// What `--exit-code` gates on: a tensor whose content differs, or one only one side has.
bool changesContent(const std::vector<DiffEntry>& entries)
{
    return std::any_of(entries.begin(), entries.end(), [](const DiffEntry& e) {
        return e.kind == ChangeKind::ContentChanged || e.kind == ChangeKind::Added
            || e.kind == ChangeKind::Removed;
    });
}

int diff(const std::string& pathA, const std::string& pathB, bool json, bool exitCode)
{
    // Either may be a model on a server: its bytes are read where they differ.
    commandStep("opening the models");
    auto a = openModelArgument(pathA, commandToken());
    auto b = a ? openModelArgument(pathB, commandToken())
               : Result<std::unique_ptr<Model>>(Error::internal("not run"));
    if (!a || !b)
        return reportFailure(!a ? a.error() : b.error());
    commandStep("comparing the tensors");
    auto entries = diffModels(**a, **b, {.progress = {}, .cancel = commandToken()});
    if (!entries)
        return reportFailure(entries.error());
    const int code = exitCode && changesContent(*entries) ? Failed : Ok;
    if (json) {
        writeDiffJson(std::cout, **a, **b, *entries);
        return code;
    }
    std::map<std::string_view, size_t> counts;
    for (const auto& e : *entries) {
        ++counts[changeKey(e.kind)];
        if (e.kind == ChangeKind::Unchanged)
            continue;
        std::cout << changeKey(e.kind) << "  " << printable(e.scope + "/" + e.name);
        if (e.a >= 0 && e.b >= 0)
            std::cout << "  " << placeText((*a)->tensors()[static_cast<size_t>(e.a)]) << " -> "
                      << placeText((*b)->tensors()[static_cast<size_t>(e.b)]);
        std::cout << '\n';
    }
    for (std::string_view key : kChangeKeys)
        std::cout << (key == kChangeKeys[0] ? "" : ", ") << counts[key] << ' ' << key;
    std::cout << '\n';
    auto versions = remoteVersionsOf(**a);
    for (auto& version : remoteVersionsOf(**b))
        versions.push_back(std::move(version));
    if (!versions.empty())
        std::cout << "versions read: " << printable(versionsText(versions)) << '\n';
    return code;
}

} // namespace

Command addDiff(CLI::App& app)
{
    auto* sub = app.add_subcommand("diff", "Compare where two models keep their tensors");
    auto a = std::make_shared<std::string>();
    auto b = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    auto exitCode = std::make_shared<bool>(false);
    sub->add_option("A", *a, "The first model: " + std::string(kModelForms))->required();
    sub->add_option("B", *b, "The second model, the same kinds")->required();
    sub->add_flag("--json", *json, "Print one JSON object (schema onnx-repack/diff/1)");
    sub->add_flag("--exit-code", *exitCode,
        "Exit 1 when a tensor's content differs or a tensor was added or removed (moves and "
        "storage changes are fine): a CI gate for \"this repack changed no weight\"");
    return {sub, [a, b, json, exitCode] { return diff(*a, *b, *json, *exitCode); }};
}

} // namespace repack::cli
