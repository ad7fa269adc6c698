#include "layout_options.h"

#include "core/format.h"
#include "core/model.h"
#include "core/placement_plan.h"

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

// Parses a SIZE option; CLI11 has already checked it is present.
std::optional<uint64_t> size(const std::string& option, const std::string& text)
{
    auto value = parseSize(text);
    if (!value)
        std::cerr << "onnx-repack: " << option << ": '" << text
                  << "' is not a size (bytes, or a number with K/KiB/M/MiB/G/GiB)\n";
    return value;
}

bool validAlignment(uint64_t alignment)
{
    return alignment == 0 || (alignment <= kMaxAlignment && (alignment & (alignment - 1)) == 0);
}

} // namespace

LayoutArgs::LayoutArgs()
{
    const SaveOptions defaults;
    threshold = sizeText(defaults.threshold);
    align = sizeText(defaults.alignment);
    alignThreshold = sizeText(defaults.alignThreshold);
    order = orderText(defaults.order);
    shardSize = sizeText(defaults.shardSize);
}

void addLayoutOptions(CLI::App& sub, LayoutArgs& args)
{
    const LayoutArgs defaults;
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
    allInline->excludes(threshold)->excludes(data)->excludes(shardSize);
    sub.add_flag("--allow-corrupt", args.allowCorrupt,
        "Carry forward bytes that fail validation as they are, keeping their old checksum");
    sub.add_option("--plan", args.planFile,
           "Place the tensors a plan file names as it says (schema onnx-repack/plan/1, as "
           "`onnx-repack plan --json` prints); the others follow the threshold")
        ->type_name("FILE.json");
}

std::optional<SaveOptions> parseLayoutOptions(const LayoutArgs& args)
{
    auto threshold = size("--threshold", args.threshold);
    auto align = size("--align", args.align);
    auto alignThreshold = size("--align-threshold", args.alignThreshold);
    auto shard = size("--shard-size", args.shardSize);
    if (!threshold || !align || !alignThreshold || !shard)
        return std::nullopt;
    if (!validAlignment(*align)) {
        std::cerr << "onnx-repack: --align: '" << args.align
                  << "' must be 0 or a power of two up to " << sizeText(kMaxAlignment) << '\n';
        return std::nullopt;
    }
    SaveOptions options;
    options.dataFile = args.data;
    options.threshold = *threshold;
    options.alignment = *align;
    options.alignThreshold = *alignThreshold;
    options.order = args.order == "size" ? TensorOrder::SizeAscending : TensorOrder::Declaration;
    options.includeAttributes = !args.noAttributes;
    options.allInline = args.allInline;
    options.shardSize = *shard;
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
    options.plan = std::move(*plan);
    return true;
}

} // namespace repack::cli
