#include "cli.h"
#include "commands.h"
#include "progress_bar.h"

#include "core/format.h"
#include "core/model.h"
#include "core/save.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

namespace repack::cli {
namespace {

struct RepackArgs {
    std::string input;
    std::string output;
    std::string data;
    std::string threshold = "1024";
    std::string align = "4096";
    std::string alignThreshold = "1MiB";
    std::string order = "declaration";
    bool noAttributes = false;
    bool allInline = false;
    std::string shardSize = "0";
    bool checksum = false;
    bool force = false;
    bool progress = false;
};

// Parses a SIZE option; CLI11 has already checked it is present.
std::optional<uint64_t> size(const std::string& option, const std::string& text)
{
    auto value = parseSize(text);
    if (!value)
        std::cerr << "onnx-repack: " << option << ": '" << text
                  << "' is not a size (bytes, or a number with K/KiB/M/MiB/G/GiB)\n";
    return value;
}

int repack(const RepackArgs& args)
{
    SaveOptions options;
    auto threshold = size("--threshold", args.threshold);
    auto align = size("--align", args.align);
    auto alignThreshold = size("--align-threshold", args.alignThreshold);
    auto shard = size("--shard-size", args.shardSize);
    if (!threshold || !align || !alignThreshold || !shard)
        return Usage;
    options.dataFile = args.data;
    options.threshold = *threshold;
    options.alignment = *align;
    options.alignThreshold = *alignThreshold;
    options.order = args.order == "size" ? TensorOrder::SizeAscending : TensorOrder::Declaration;
    options.includeAttributes = !args.noAttributes;
    options.allInline = args.allInline;
    options.shardSize = *shard;
    options.checksum = args.checksum;
    options.force = args.force;

    auto model = Model::load(args.input);
    if (!model) {
        std::cerr << "onnx-repack: " << model.error().message << '\n';
        return Failed;
    }
    ProgressBar bar;
    if (args.progress)
        options.progress = [&bar](const Progress& p) { bar.update(p); };
    auto report = save(**model, args.output, options);
    bar.finish();
    if (!report) {
        std::cerr << "onnx-repack: " << report.error().message << '\n';
        return Failed;
    }
    std::cout << "wrote " << report->modelPath.string() << ": " << report->externalTensors
              << " external and " << report->inlineTensors << " inline tensors, "
              << formatBytes(report->bytesWritten) << " in " << report->dataFiles.size()
              << " data file(s) and the model, " << report->seconds << " s\n";
    return Ok;
}

} // namespace

Command addRepack(CLI::App& app)
{
    auto* sub = app.add_subcommand("repack", "Rewrite where tensors live, safely");
    auto args = std::make_shared<RepackArgs>();
    sub->add_option("IN", args->input, "The model to read")->required();
    sub->add_option("-o,--output", args->output, "The model to write (may equal IN)")->required();
    sub->add_option("--data", args->data,
        "Data file name, relative to OUT's folder "
        "(default: OUT's name + .data)");
    sub->add_option(
        "--threshold", args->threshold, "Tensors of at least SIZE go external (default 1024)");
    sub->add_option("--align", args->align,
        "Offset alignment of large tensors, 0 = dense "
        "(default 4096)");
    sub->add_option("--align-threshold", args->alignThreshold,
        "Tensors of at least SIZE are aligned (default 1MiB)");
    sub->add_option("--order", args->order, "Data file order: declaration or size")
        ->check(CLI::IsMember({"declaration", "size"}));
    sub->add_flag("--no-attributes", args->noAttributes, "Keep attribute tensors inline");
    sub->add_flag("--inline", args->allInline, "Bring every tensor inline");
    sub->add_option("--shard-size", args->shardSize, "Maximum bytes per data file (0 = one file)");
    sub->add_flag("--checksum", args->checksum, "Write a SHA-1 checksum per external tensor");
    sub->add_flag(
        "--force", args->force, "Overwrite an existing data file that the model does not use");
    sub->add_flag("--progress", args->progress, "Draw a progress bar on stderr");
    return {sub, [args] { return repack(*args); }};
}

} // namespace repack::cli
