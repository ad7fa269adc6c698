#include "cli.h"
#include "command_token.h"
#include "commands.h"
#include "core/remote/model_source.h"
#include "terminal_text.h"

#include "core/inspect/folder_scan.h"
#include "core/inspect/report.h"
#include "core/inspect/verify.h"
#include "core/io/source_spec.h"
#include "core/json_stream.h"
#include "core/model/model.h"
#include "core/model/model_sources.h"

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

namespace repack::cli {
namespace {

// `verify --json` of a model that could not be read: the keys of writeVerifyJson's document,
// "ok" false, the reason as the one problem; what is unknown is null. The path is absolute, as
// a loaded model's; a remote model's is its address as messages show it (no query, no secret).
void writeUnreadableJson(std::ostream& out, const std::string& path, const Error& error)
{
    using Json = nlohmann::ordered_json;
    const auto spec = parseSource(path);
    const std::string shown = spec && spec->isRemote()
        ? spec->display()
        : std::filesystem::absolute(path).lexically_normal().string();
    const Json problem{{"severity", severityName(Severity::Error)}, {"tensor", ""},
        {"code", code::UnreadableFile}, {"message", error.message}};
    const Json document{{"schema", kVerifySchema}, {"model", Json{{"path", shown}}}, {"ok", false},
        {"external_tensors", nullptr}, {"external_bytes", nullptr},
        {"problems", Json::array({problem})}, {"sources", nullptr}};
    out << jsonText(document) << '\n';
}

int verifyModel(const std::string& path, bool json)
{
    commandStep("opening " + shownArgument(path));
    auto model = openModelArgument(path, commandToken());
    if (!model) {
        if (json && !commandStopped())
            writeUnreadableJson(std::cout, path, model.error());
        return reportFailure(model.error());
    }
    commandStep("verifying " + shownArgument(path));
    std::vector<Problem> problems = verify(**model, {.progress = {}, .cancel = commandToken()});
    if (commandStopped()) // what was read is no verdict
        return reportFailure(cancelled("verify"));
    for (auto& p : housekeepingProblems(**model)) // warnings: the exit code stays the data's
        problems.push_back(std::move(p));
    const bool failed = std::any_of(problems.begin(), problems.end(),
        [](const Problem& p) { return p.severity == Severity::Error; });
    if (json) {
        writeVerifyJson(std::cout, **model, problems);
    } else {
        for (const auto& p : problems)
            std::cerr << printable(path) << ": " << severityName(p.severity) << ": " << p.code
                      << ": " << printable(p.message) << '\n';
        if (!failed)
            std::cout << printable(path) << ": ok, " << (*model)->tensors().size()
                      << " tensors verified\n";
        if (const auto versions = remoteVersionsOf(**model); !versions.empty())
            std::cout << "versions read: " << printable(versionsText(versions)) << '\n';
    }
    return failed ? Failed : Ok;
}

} // namespace

Command addVerify(CLI::App& app)
{
    auto* sub = app.add_subcommand("verify", "Read every external byte range and check it");
    auto path = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    sub->add_option("MODEL", *path, "The .onnx file: " + std::string(kModelForms))->required();
    sub->add_flag("--json", *json,
        "Print one JSON object (schema onnx-repack/verify/1), also when the model cannot be read");
    return {sub, [path, json] { return verifyModel(*path, *json); }};
}

} // namespace repack::cli
