#include "layout_options.h"

#include "core/format.h"
#include "core/model/model.h"
#include "core/plan/placement_plan.h"
#include "core/plan/targets.h"
#include "core/remote/model_source.h"
#include "terminal_text.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <sstream>

namespace repack::cli {
namespace {

const char* orderText(TensorOrder order)
{
    return order == TensorOrder::SizeAscending ? "size" : "declaration";
}

std::string targetHelp()
{
    std::string help = "Set the data file name, alignment and file limits for one reader; "
                       "the options below override it:";
    for (const Target& t : targets())
        help.append("\n  ").append(t.name).append(": ").append(t.summary);
    return help;
}

} // namespace

void addLayoutOptions(CLI::App& sub, LayoutArgs& args)
{
    const SaveOptions core;
    struct {
        std::string threshold, align, alignThreshold, order, shardSize;
    } const defaults{sizeText(core.threshold), sizeText(core.alignment),
        sizeText(core.alignThreshold), orderText(core.order), sizeText(core.shardSize)};
    // Values and exclusions are the core's to check (applySaveRequest), in the words it uses
    // for every front end: CLI11 parses syntax only.
    sub.add_option("--target", args.request.target, targetHelp())->type_name("NAME");
    sub.add_option("--data", args.request.data,
           "Data file name, relative to OUT's folder "
           "(default: OUT's name + .data)")
        ->type_name("NAME");
    sub.add_option("--threshold", args.request.threshold,
           "Tensors of at least SIZE go external (default " + defaults.threshold + ")")
        ->type_name("SIZE");
    sub.add_option("--align", args.request.align,
           "Offset alignment of large tensors: 0 (dense) or a power of two up to "
               + sizeText(kMaxAlignment) + " (default " + defaults.align + ")")
        ->type_name("SIZE");
    sub.add_option("--align-threshold", args.request.alignThreshold,
           "Tensors of at least SIZE are aligned (default " + defaults.alignThreshold + ")")
        ->type_name("SIZE");
    sub.add_option("--order", args.request.order,
        "Data file order: declaration or size (default " + defaults.order + ")");
    sub.add_flag("--no-attributes", args.request.noAttributes, "Keep attribute tensors inline");
    sub.add_flag("--inline", args.request.allInline, "Bring every tensor inline");
    sub.add_option("--shard-size", args.request.shardSize,
           "Maximum bytes per data file, 0 = one file (default " + defaults.shardSize + ")")
        ->type_name("SIZE");
    sub.add_flag("--dedupe", args.request.dedupe,
        "Store tensors with identical dtype, shape and bytes once (tied embeddings, repeated "
        "constants); their entries point at the same range");
    sub.add_option("--format", args.request.format,
           "Data file format: onnx (raw bytes) or safetensors (each data file is "
           "also a .safetensors file; default name OUT's name + .safetensors, "
           "tensors back to back, so no --align or --dedupe; default onnx)")
        ->type_name("FORMAT");
    sub.add_flag("--allow-corrupt", args.request.allowCorrupt,
        "Carry forward bytes that fail validation as they are, keeping their old checksum");
    auto* plan = sub.add_option("--plan", args.planFile,
                        "Place the tensors a plan file names as it says (schema "
                        "onnx-repack/plan/1, as `onnx-repack plan --json` prints); the others "
                        "follow the threshold")
                     ->type_name("FILE.json");
    // --plan is read here, not by the core's request: its exclusion is CLI11's.
    sub.add_flag("--keep", args.request.keep,
           "Keep every tensor where it is: inline stays inline, an external tensor stays in the "
           "data file of its location, at its offset where it can (as onnx_ir's ir.save without "
           "external_data, and the Python package's save() without layout keywords)")
        ->excludes(plan);
    sub.add_option("--compact", args.request.compact,
           "With --keep: lay the tensors of data file FILE (as the model names it) out again "
           "back to back, closing the orphaned ranges that tensors moved out of it left; every "
           "other file keeps its layout. Repeat for more files")
        ->type_name("FILE")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

std::optional<SaveOptions> parseLayoutOptions(
    const LayoutArgs& args, const std::string& outputModel)
{
    auto result = applySaveRequest(args.request, outputModel);
    if (!result) {
        std::istringstream lines(result.error().message);
        for (std::string line; std::getline(lines, line);)
            std::cerr << "onnx-repack: " << line << '\n';
        return std::nullopt;
    }
    for (const auto& note : result->notes)
        std::cerr << "onnx-repack: note: " << note << '\n';
    return std::move(result->options);
}

std::optional<std::string> outputModelFor(const std::string& input, const std::string& output)
{
    if (namesRemoteModel(output)) {
        std::cerr << "onnx-repack: -o " << printable(output)
                  << ": the output must be a local path (repacks write local files only)\n";
        return std::nullopt;
    }
    if (output.empty() && namesRemoteModel(input)) {
        std::cerr << "onnx-repack: " << printable(input)
                  << " is read from a server and cannot be repacked in place: name a local "
                     "output with -o OUT\n";
        return std::nullopt;
    }
    return output.empty() ? input : output;
}

Status readPlanOption(const LayoutArgs& args, const Model& model, SaveOptions& options)
{
    if (args.planFile.empty())
        return {};
    auto plan = readPlanFile(model, args.planFile);
    if (!plan)
        return plan.error();
    options.placements = std::move(*plan);
    return {};
}

void printPaddingNote(uint64_t paddingBytes, uint64_t dataBytes)
{
    if (dataBytes == 0 || paddingBytes < dataBytes / 10)
        return;
    std::cout << "note: alignment padding takes " << formatBytes(paddingBytes) << " of the "
              << formatBytes(dataBytes) << " of data files (" << paddingBytes * 100 / dataBytes
              << " %); a smaller --align or a larger --align-threshold saves it\n";
}

namespace {

// The layout options a folder save does not take (yet), by the flag the user typed.
std::string unsupportedForFolders(const LayoutArgs& args)
{
    const SaveRequest& r = args.request;
    for (auto [given, flag] : {std::pair{!r.data.empty(), "--data (--shared-data names the file)"},
             std::pair{r.allInline, "--inline"}, std::pair{!r.shardSize.empty(), "--shard-size"},
             std::pair{!r.target.empty(), "--target"}, std::pair{!r.format.empty(), "--format"},
             std::pair{r.keep, "--keep"}, std::pair{!args.planFile.empty(), "--plan"},
             std::pair{r.removeUnused,
                 "--remove-unused (an in-place folder save removes what no model reads)"},
             std::pair{r.dedupe, "--dedupe (the shared data file stores each content once)"}})
        if (given)
            return flag;
    return {};
}

} // namespace

std::optional<FolderSaveOptions> folderSaveOptions(const LayoutArgs& args,
    const std::string& outDir, const std::string& sharedData,
    const std::vector<std::string>& models)
{
    // Each graph saved on its own takes every option but a data file name (one name for every
    // graph would be one file written over by each) and a plan (of one model).
    const std::string flag = !sharedData.empty() ? unsupportedForFolders(args)
        : !args.request.data.empty()
        ? std::string("--data (each graph names its own; --shared-data makes one they share)")
        : !args.planFile.empty() ? std::string("--plan")
                                 : std::string();
    if (!flag.empty()) {
        std::cerr << "onnx-repack: " << flag << " is not available for a folder\n";
        return std::nullopt;
    }
    auto layout = parseLayoutOptions(args, (std::filesystem::path(outDir) / "model.onnx").string());
    if (!layout)
        return std::nullopt;
    FolderSaveOptions options{layout->layout(), layout->controls(), sharedData, models};
    if (sharedData.empty())
        options.perGraphRequest = args.request; // each graph names its own data file
    return options;
}

} // namespace repack::cli
