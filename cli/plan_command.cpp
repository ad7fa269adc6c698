#include "cli.h"
#include "command_token.h"
#include "commands.h"
#include "layout_options.h"
#include "terminal_text.h"
#include "text_table.h"

#include "core/format.h"
#include "core/inspect/plan_diff.h"
#include "core/inspect/report.h"
#include "core/json_stream.h"
#include "core/model/model.h"
#include "core/plan/file_layout.h"
#include "core/plan/placement_plan.h"
#include "core/plan/save_plan.h"
#include "core/remote/model_source.h"
#include "core/save/folder_save.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <numeric>

namespace repack::cli {
namespace {

struct PlanArgs {
    std::string input;
    std::string output; // empty: IN, as an in-place repack
    LayoutArgs layout; // the same options as `repack`
    bool json = false;
    bool diff = false; // what the repack would change instead of the whole plan
    std::string sharedData; // a folder: the data file its graphs would share
    std::vector<std::string> models; // a folder: the graphs (default: all)
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
    // Orphaned bytes (keeping placement, where a tensor moved out) only when a file has some.
    std::vector<FileLayout> layouts;
    for (size_t f = 0; f < plan.files.size(); ++f)
        layouts.push_back(plannedLayout(plan, f));
    const bool orphans = std::any_of(
        layouts.begin(), layouts.end(), [](const FileLayout& l) { return l.orphanedBytes != 0; });
    std::vector<std::string> columns{"file", "bytes", "padding"};
    if (orphans)
        columns.push_back("orphaned");
    if (headers)
        columns.push_back("header");
    TextTable files(columns);
    for (const FileLayout& l : layouts) {
        std::vector<std::string> row{
            l.location, std::to_string(l.bytes), std::to_string(l.paddingBytes)};
        if (orphans)
            row.push_back(std::to_string(l.orphanedBytes));
        if (headers)
            row.push_back(std::to_string(l.headerBytes) + " (safetensors)");
        files.addRow(std::move(row));
    }
    std::vector<size_t> numeric(columns.size() - 1);
    std::iota(numeric.begin(), numeric.end(), size_t(1));
    files.print(std::cout, numeric);
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

std::string placeText(const TensorPlace& place)
{
    if (!place.external)
        return "inline";
    return place.location + "@" + std::to_string(place.offset);
}

std::string_view changeText(ChangeKind kind)
{
    switch (kind) {
    case ChangeKind::Moved:
        return "moved";
    case ChangeKind::NewFile:
        return "new file";
    case ChangeKind::ToInline:
        return "to inline";
    case ChangeKind::ToExternal:
        return "to external";
    default:
        return changeKey(kind);
    }
}

std::string bytesText(bool present, uint64_t bytes)
{
    return present ? std::to_string(bytes) : "-";
}

// The tensors that change place (unchanged ones are left out), every data file on either side,
// and a summary line; a plan that keeps the layout says so in one line.
void printPlanDiff(const PlanDiff& diff)
{
    if (diff.changesNothing()) {
        std::cout << "nothing changes: all " << diff.tensors.size()
                  << " tensor(s) keep their place and every data file its size; nothing written\n";
        return;
    }
    TextTable tensors({"tensor", "change", "bytes", "from", "to"});
    for (const PlanDiffTensor& t : diff.tensors) {
        if (t.kind == ChangeKind::Unchanged)
            continue;
        tensors.addRow({t.scope + "/" + t.name, std::string(changeText(t.kind)),
            std::to_string(t.after.length), placeText(t.before), placeText(t.after)});
    }
    if (diff.count(ChangeKind::Unchanged) != diff.tensors.size()) {
        tensors.print(std::cout, {2});
        std::cout << '\n';
    }
    // Orphaned bytes (no tensor reads them) only when a file has some on either side.
    const bool orphans = std::any_of(diff.files.begin(), diff.files.end(),
        [](const PlanDiffFile& f) { return f.orphanedBefore || f.orphanedAfter; });
    TextTable files(orphans
            ? std::vector<std::string>{"file", "before", "after", "orphaned", "change"}
            : std::vector<std::string>{"file", "before", "after", "change"});
    for (const PlanDiffFile& f : diff.files) {
        std::vector<std::string> row{
            f.location, bytesText(f.before, f.bytesBefore), bytesText(f.after, f.bytesAfter)};
        if (orphans)
            row.push_back(bytesText(f.before, f.orphanedBefore) + " -> "
                + bytesText(f.after, f.orphanedAfter));
        row.emplace_back(planFileChange(f));
        files.addRow(std::move(row));
    }
    if (!diff.files.empty()) {
        files.print(std::cout, orphans ? std::vector<size_t>{1, 2, 3} : std::vector<size_t>{1, 2});
        std::cout << '\n';
    }
    std::cout << diff.tensors.size() - diff.count(ChangeKind::Unchanged) << " of "
              << diff.tensors.size() << " tensor(s) change: ";
    const ChangeKind kinds[]
        = {ChangeKind::Moved, ChangeKind::NewFile, ChangeKind::ToInline, ChangeKind::ToExternal};
    for (ChangeKind kind : kinds)
        std::cout << (kind == kinds[0] ? "" : ", ") << diff.count(kind) << ' ' << changeText(kind);
    std::cout << "; " << formatBytes(diff.toInlineBytes) << " into the .onnx, "
              << formatBytes(diff.toExternalBytes) << " out of it; nothing written\n";
}

void printFolderPlan(const FolderSaveReport& r)
{
    if (r.unchanged) {
        std::cout << "nothing changes: the " << r.models.size() << " graph(s) already share "
                  << printable(r.sharedData.filename().string()) << " as planned\n";
        return;
    }
    std::cout << r.models.size() << " graph(s) would read " << printable(r.sharedData.string())
              << ": " << r.externalTensors << " external tensors (" << formatBytes(r.externalBytes)
              << ") stored once each in " << formatBytes(r.sharedBytes) << " (" << r.sharedRanges
              << " distinct)\n";
    std::cout << "the graphs and their data: " << formatBytes(r.bytesBefore) << " now, about "
              << formatBytes(r.bytesAfter) << " after\n";
    for (const auto& file : r.removed)
        std::cout << "would remove " << printable(file.string()) << " (no model would read it)\n";
    if (!r.consentNeeded.empty())
        std::cout << "needs --force: " << printable(r.consentNeeded) << '\n';
}

// Each graph's changes (printPlanDiff) under its name, then the folder's summary.
void printFolderPlanDiff(const FolderSaveReport& r)
{
    for (size_t i = 0; i < r.models.size() && i < r.diffs.size(); ++i) {
        std::cout << printable(r.models[i]) << ":\n";
        printPlanDiff(r.diffs[i]);
        std::cout << '\n';
    }
    printFolderPlan(r);
}

nlohmann::ordered_json folderPlanJson(const FolderSaveReport& r)
{
    std::vector<std::string> removed;
    for (const auto& file : r.removed)
        removed.push_back(file.string());
    return {{"schema", "onnx-repack/folder-plan/1"}, {"folder", r.folder.string()},
        {"shared_data", r.sharedData.string()}, {"models", r.models},
        {"external_tensors", r.externalTensors}, {"external_bytes", r.externalBytes},
        {"shared_bytes", r.sharedBytes}, {"distinct", r.sharedRanges},
        {"bytes_before", r.bytesBefore}, {"bytes_after", r.bytesAfter}, {"would_remove", removed},
        {"unchanged", r.unchanged},
        {"consent_needed",
            r.consentNeeded.empty() ? nlohmann::ordered_json(nullptr)
                                    : nlohmann::ordered_json(r.consentNeeded)}};
}

// The folder plan's document with each graph's plan diff: {"schema":
// "onnx-repack/folder-plan-diff/1", the folder-plan fields, "graphs": [{"model", the plan-diff
// fields}]}.
void writeFolderPlanDiffJson(const FolderSaveReport& r)
{
    JsonStream json(std::cout);
    json.beginObject();
    json.field("schema", "onnx-repack/folder-plan-diff/1");
    const nlohmann::ordered_json plan = folderPlanJson(r);
    for (auto it = plan.begin(); it != plan.end(); ++it)
        if (it.key() != "schema")
            json.field(it.key(), it.value());
    json.key("graphs");
    json.beginArray();
    for (size_t i = 0; i < r.models.size() && i < r.diffs.size(); ++i) {
        json.beginObject();
        json.field("model", r.models[i]);
        writePlanDiffFields(json, r.diffs[i]);
        json.endObject();
    }
    json.endArray();
    json.endObject();
    std::cout << '\n';
}

int planFolder(const PlanArgs& args)
{
    if (args.sharedData.empty()) {
        std::cerr << "onnx-repack: " << printable(args.input)
                  << " is a folder: plan its graphs into one shared data file with "
                     "--shared-data NAME\n";
        return Usage;
    }
    const auto output = outputModelFor(args.input, args.output); // a remote folder: -o LOCAL
    if (!output)
        return Usage;
    auto options = folderSaveOptions(args.layout, *output, args.sharedData, args.models);
    if (!options)
        return Usage;
    options->dryRun = true;
    options->diffs = args.diff;
    options->controls.cancel = commandToken();
    commandStep("reading the folder " + shownArgument(args.input));
    auto folder = openFolderArgument(args.input, options->controls.cancel);
    if (!folder)
        return reportFailure(folder.error());
    commandStep("planning " + *output);
    auto report = saveFolder(**folder, *output, *options);
    if (!report)
        return reportFailure(report.error());
    if (args.diff && args.json)
        writeFolderPlanDiffJson(*report);
    else if (args.diff)
        printFolderPlanDiff(*report);
    else if (args.json)
        std::cout << jsonText(folderPlanJson(*report)) << '\n';
    else
        printFolderPlan(*report);
    return Ok;
}

int planCommand(const PlanArgs& args)
{
    if (namesFolderArgument(args.input))
        return planFolder(args);
    if (!args.sharedData.empty() || !args.models.empty()) {
        std::cerr << "onnx-repack: --shared-data and --models plan a folder of graphs; "
                  << printable(args.input) << " is one model\n";
        return Usage;
    }
    const auto output = outputModelFor(args.input, args.output);
    if (!output)
        return Usage;
    auto options = parseLayoutOptions(args.layout, *output);
    if (!options)
        return Usage;
    options->cancel = commandToken();
    commandStep("opening " + shownArgument(args.input));
    auto model = openModelArgument(args.input, options->cancel);
    if (!model)
        return reportFailure(model.error());
    if (Status s = readPlanOption(args.layout, **model, *options); !s)
        return reportFailure(s.error());
    commandStep("planning " + *output);
    auto plan = planSave(**model, *output, *options);
    if (!plan)
        return reportFailure(plan.error());
    if (args.diff) {
        const PlanDiff diff = diffPlan(**model, *plan);
        if (args.json)
            writePlanDiffJson(std::cout, diff);
        else
            printPlanDiff(diff);
    } else if (args.json) {
        writePlanJson(std::cout, **model, *plan, *output);
    } else {
        printPlan(**model, *plan);
    }
    return Ok;
}

} // namespace

Command addPlan(CLI::App& app)
{
    auto* sub = app.add_subcommand(
        "plan", "Print where a repack would put every tensor, without writing anything");
    auto args = std::make_shared<PlanArgs>();
    sub->add_option("IN", args->input,
           "The model to read (" + std::string(kModelForms)
               + "), or a folder of graphs (a path or hf://ORG/REPO[@REV]/DIR)")
        ->required();
    sub->add_option("-o,--output", args->output,
        "The model a repack would write (default IN; required for a model read from a server): "
        "names the default data file; for a folder IN, the folder");
    sub->add_option("--shared-data", args->sharedData,
           "For a folder IN: the one data file its graphs would share (onnx-repack/folder-plan/1 "
           "with --json)")
        ->type_name("NAME");
    sub->add_option("--models", args->models, "For a folder IN: the graphs (default: all)")
        ->delimiter(',')
        ->type_name("A.onnx,B.onnx");
    addLayoutOptions(*sub, args->layout);
    sub->add_flag("--json", args->json,
        "Print one JSON object (schema onnx-repack/plan/1), a plan file for repack --plan");
    sub->add_flag("--diff", args->diff,
        "Print what the repack would change instead: the tensors that move (from, to), the data "
        "files that appear, go unused or change size (with --json: schema "
        "onnx-repack/plan-diff/1); for a folder, each graph's, then the summary (schema "
        "onnx-repack/folder-plan-diff/1)");
    return {sub, [args] { return planCommand(*args); }};
}

} // namespace repack::cli
