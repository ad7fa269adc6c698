#include "cli.h"
#include "commands.h"
#include "layout_options.h"
#include "text_table.h"

#include "cli/terminal_text.h"
#include "core/format.h"
#include "core/model.h"
#include "core/placement_plan.h"
#include "core/save_plan.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <memory>

namespace repack::cli {
namespace {

struct PlanArgs {
    std::string input;
    std::string output; // empty: IN, as an in-place repack
    LayoutArgs layout; // the same options as `repack`
    bool json = false;
};

void printPlan(const Model& model, const SavePlan& plan)
{
    TextTable tensors({"tensor", "storage", "location", "offset", "length"});
    for (size_t i = 0; i < model.tensors().size(); ++i) {
        const PlannedTensor& p = plan.tensors[i];
        if (p.external)
            tensors.addRow({model.tensors()[i].qualifiedName(), "external",
                plan.files[static_cast<size_t>(p.file)], std::to_string(p.offset),
                std::to_string(p.length)});
        else
            tensors.addRow({model.tensors()[i].qualifiedName(),
                model.tensors()[i].mustStayInline() ? "inline (read at graph build)" : "inline", "",
                "", std::to_string(model.tensors()[i].byteSize())});
    }
    tensors.print(std::cout, {3, 4});
    std::cout << '\n';
    const bool headers = std::any_of(plan.fileHeaders.begin(), plan.fileHeaders.end(),
        [](const std::string& h) { return !h.empty(); });
    TextTable files(headers ? std::vector<std::string>{"file", "bytes", "padding", "header"}
                            : std::vector<std::string>{"file", "bytes", "padding"});
    for (size_t f = 0; f < plan.files.size(); ++f) {
        const uint64_t header = f < plan.fileHeaders.size() ? plan.fileHeaders[f].size() : 0;
        std::vector<std::string> row{plan.files[f], std::to_string(plan.fileBytes[f]),
            std::to_string(plan.fileBytes[f] - usedBytes(plan, f) - header)};
        if (headers)
            row.push_back(std::to_string(header) + " (safetensors)");
        files.addRow(std::move(row));
    }
    files.print(std::cout, headers ? std::vector<size_t>{1, 2, 3} : std::vector<size_t>{1, 2});
    std::cout << plan.externalBytes << " bytes (" << formatBytes(plan.externalBytes)
              << ") external in " << plan.files.size() << " data file(s), " << plan.inlineBytes
              << " bytes (" << formatBytes(plan.inlineBytes) << ") inline; nothing written\n";
    uint64_t dataBytes = 0;
    for (auto bytes : plan.fileBytes)
        dataBytes += bytes;
    printPaddingNote(paddingBytes(plan), dataBytes);
    if (plan.sharedTensors)
        std::cout << plan.sharedTensors << " tensor(s) share the range of an identical one ("
                  << formatBytes(plan.sharedBytes) << " stored once)\n";
}

int planCommand(const PlanArgs& args)
{
    const std::string output = args.output.empty() ? args.input : args.output;
    auto options = parseLayoutOptions(args.layout, output);
    if (!options)
        return Usage;
    auto model = Model::load(args.input);
    if (!model) {
        std::cerr << "onnx-repack: " << printable(model.error().message) << '\n';
        return Failed;
    }
    if (!readPlanOption(args.layout, **model, *options))
        return Failed;
    auto plan = planSave(**model, output, *options);
    if (!plan) {
        std::cerr << "onnx-repack: " << printable(plan.error().message) << '\n';
        return Failed;
    }
    if (args.json)
        writePlanJson(std::cout, **model, *plan, output);
    else
        printPlan(**model, *plan);
    return Ok;
}

} // namespace

Command addPlan(CLI::App& app)
{
    auto* sub = app.add_subcommand(
        "plan", "Print where a repack would put every tensor, without writing anything");
    auto args = std::make_shared<PlanArgs>();
    sub->add_option("IN", args->input, "The model to read")->required();
    sub->add_option("-o,--output", args->output,
        "The model a repack would write (default IN): names the default data file");
    addLayoutOptions(*sub, args->layout);
    sub->add_flag("--json", args->json,
        "Print one JSON object (schema onnx-repack/plan/1), a plan file for repack --plan");
    return {sub, [args] { return planCommand(*args); }};
}

} // namespace repack::cli
