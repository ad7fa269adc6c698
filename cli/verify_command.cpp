#include "cli.h"
#include "commands.h"

#include "core/folder_scan.h"
#include "core/model.h"
#include "core/report.h"
#include "core/verify.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <memory>

namespace repack::cli {
namespace {

int verifyModel(const std::string& path, bool json)
{
    auto model = Model::load(path);
    if (!model) {
        std::cerr << "onnx-repack: " << model.error().message << '\n';
        return Failed;
    }
    std::vector<Problem> problems = verify(**model);
    for (auto& p : housekeepingProblems(**model)) // warnings: the exit code stays the data's
        problems.push_back(std::move(p));
    const bool failed = std::any_of(problems.begin(), problems.end(),
        [](const Problem& p) { return p.severity == Severity::Error; });
    if (json) {
        writeVerifyJson(std::cout, **model, problems);
    } else {
        for (const auto& p : problems)
            std::cerr << path << ": " << severityName(p.severity) << ": " << p.code << ": "
                      << p.message << '\n';
        if (!failed)
            std::cout << path << ": ok, " << (*model)->tensors().size() << " tensors verified\n";
    }
    return failed ? Failed : Ok;
}

} // namespace

Command addVerify(CLI::App& app)
{
    auto* sub = app.add_subcommand("verify", "Read every external byte range and check it");
    auto path = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    sub->add_option("MODEL", *path, "The .onnx file")->required();
    sub->add_flag("--json", *json, "Print one JSON object (schema onnx-repack/verify/1)");
    return {sub, [path, json] { return verifyModel(*path, *json); }};
}

} // namespace repack::cli
