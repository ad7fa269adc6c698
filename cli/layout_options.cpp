#include "layout_options.h"

#include "core/format.h"
#include "core/model/model.h"
#include "core/plan/placement_plan.h"
#include "core/plan/targets.h"

#include <CLI/CLI.hpp>

#include <iostream>

namespace repack::cli {
namespace {

// A size as the user would type it and parseSize() reads back exactly: "0", "1000", "4KiB".
std::string sizeText(uint64_t bytes)
{
    static constexpr const char* kUnits[] = {"GiB", "MiB", "KiB"};
    for (int i = 0; i < 3; ++i) {
        const uint64_t unit = uint64_t(1) << (10 * (3 - i));
        if (bytes && bytes % unit == 0)
            return std::to_string(bytes / unit) + kUnits[i];
    }
    return std::to_string(bytes);
}

const char* orderText(TensorOrder order)
{
    return order == TensorOrder::SizeAscending ? "size" : "declaration";
}

// Parses a SIZE option into `value` when it was given; false after saying why on stderr.
bool size(const std::string& option, const std::string& text, uint64_t& out)
{
    if (text.empty())
        return true;
    auto value = parseSize(text);
    if (!value)
        std::cerr << "onnx-repack: " << option << ": '" << text
                  << "' is not a size (bytes, or a number with K/KiB/M/MiB/G/GiB)\n";
    else
        out = *value;
    return value.has_value();
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
    auto* target = sub.add_option("--target", args.target, targetHelp())
                       ->type_name("NAME")
                       ->check(CLI::IsMember([] {
                           std::vector<std::string> names;
                           for (const Target& t : targets())
                               names.emplace_back(t.name);
                           return names;
                       }()));
    auto* data = sub.add_option("--data", args.data,
                        "Data file name, relative to OUT's folder "
                        "(default: OUT's name + .data)")
                     ->type_name("NAME");
    auto* threshold
        = sub.add_option("--threshold", args.threshold,
                 "Tensors of at least SIZE go external (default " + defaults.threshold + ")")
              ->type_name("SIZE");
    sub.add_option("--align", args.align,
           "Offset alignment of large tensors: 0 (dense) or a power of two up to "
               + sizeText(kMaxAlignment) + " (default " + defaults.align + ")")
        ->type_name("SIZE");
    sub.add_option("--align-threshold", args.alignThreshold,
           "Tensors of at least SIZE are aligned (default " + defaults.alignThreshold + ")")
        ->type_name("SIZE");
    sub.add_option("--order", args.order,
           "Data file order: declaration or size (default " + defaults.order + ")")
        ->check(CLI::IsMember({"declaration", "size"}));
    sub.add_flag("--no-attributes", args.noAttributes, "Keep attribute tensors inline");
    auto* allInline = sub.add_flag("--inline", args.allInline, "Bring every tensor inline");
    auto* shardSize
        = sub.add_option("--shard-size", args.shardSize,
                 "Maximum bytes per data file, 0 = one file (default " + defaults.shardSize + ")")
              ->type_name("SIZE");
    auto* dedupe = sub.add_flag("--dedupe", args.dedupe,
        "Store tensors with identical dtype, shape and bytes once (tied embeddings, repeated "
        "constants); their entries point at the same range");
    auto* format = sub.add_option("--format", args.format,
                          "Data file format: onnx (raw bytes) or safetensors (each data file is "
                          "also a .safetensors file; default name OUT's name + .safetensors, "
                          "tensors back to back, so no --align or --dedupe; default onnx)")
                       ->check(CLI::IsMember({"onnx", "safetensors"}))
                       ->type_name("FORMAT");
    allInline->excludes(threshold)->excludes(data)->excludes(shardSize)->excludes(target)->excludes(
        format);
    format->excludes(dedupe);
    sub.add_flag("--allow-corrupt", args.allowCorrupt,
        "Carry forward bytes that fail validation as they are, keeping their old checksum");
    sub.add_option("--plan", args.planFile,
           "Place the tensors a plan file names as it says (schema onnx-repack/plan/1, as "
           "`onnx-repack plan --json` prints); the others follow the threshold")
        ->type_name("FILE.json");
}

std::optional<SaveOptions> parseLayoutOptions(
    const LayoutArgs& args, const std::string& outputModel)
{
    SaveOptions options;
    if (!args.target.empty())
        applyTarget(*findTarget(args.target), outputModel, options); // CLI11 checked the name
    const bool sizes = size("--threshold", args.threshold, options.threshold)
        & size("--align", args.align, options.alignment)
        & size("--align-threshold", args.alignThreshold, options.alignThreshold)
        & size("--shard-size", args.shardSize, options.shardSize);
    if (!sizes)
        return std::nullopt;
    if (args.format == "safetensors") {
        // The format has no gaps between tensors: an alignment asked for cannot be kept.
        if (!args.align.empty() && options.alignment > 1) {
            std::cerr << "onnx-repack: --align: safetensors files hold tensors back to back, "
                         "so they cannot be aligned (--format onnx can)\n";
            return std::nullopt;
        }
        // A target's file names and limits still apply; its alignment cannot, which is said
        // (the audit in `inspect` then lists the tensors a reader cannot map).
        if (!args.target.empty() && args.align.empty() && options.alignment > 1)
            std::cerr << "onnx-repack: note: --target " << args.target << " aligns tensors of "
                      << sizeText(options.alignThreshold) << " and more to "
                      << sizeText(options.alignment)
                      << "; safetensors files hold tensors back to back, so this save does not "
                         "(--format onnx can)\n";
        options.format = DataFormat::Safetensors;
    }
    if (!validAlignment(options.alignment)) {
        std::cerr << "onnx-repack: --align: '" << args.align
                  << "' " << kAlignmentRule << '\n';
        return std::nullopt;
    }
    if (!args.data.empty())
        options.dataFile = args.data;
    if (!args.order.empty())
        options.order
            = args.order == "size" ? TensorOrder::SizeAscending : TensorOrder::Declaration;
    options.includeAttributes = !args.noAttributes;
    options.allInline = args.allInline;
    options.dedupe = args.dedupe;
    options.allowCorrupt = args.allowCorrupt;
    return options;
}

bool readPlanOption(const LayoutArgs& args, const Model& model, SaveOptions& options)
{
    if (args.planFile.empty())
        return true;
    auto plan = readPlanFile(model, args.planFile);
    if (!plan) {
        std::cerr << "onnx-repack: " << plan.error().message << '\n';
        return false;
    }
    options.placements = std::move(*plan);
    return true;
}

void printPaddingNote(uint64_t paddingBytes, uint64_t dataBytes)
{
    if (dataBytes == 0 || paddingBytes < dataBytes / 10)
        return;
    std::cout << "note: alignment padding takes " << formatBytes(paddingBytes) << " of the "
              << formatBytes(dataBytes) << " of data files (" << paddingBytes * 100 / dataBytes
              << " %); a smaller --align or a larger --align-threshold saves it\n";
}

} // namespace repack::cli
