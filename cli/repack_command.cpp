#include "cli.h"
#include "command_token.h"
#include "commands.h"
#include "layout_options.h"
#include "progress_bar.h"
#include "terminal_text.h"

#include "core/format.h"
#include "core/model/model.h"
#include "core/plan/placement_plan.h"
#include "core/plan/targets.h"
#include "core/remote/model_source.h"
#include "core/save/folder_save.h"
#include "core/save/output_folder.h"
#include "core/save/save.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <system_error>

namespace fs = std::filesystem;

namespace repack::cli {
namespace {

// What a repack that fails leaves, stopped or not (SPEC 5): the output as it was.
constexpr const char* kNothingWritten = "nothing was written";

// The command line as given; every default is the core's (SaveOptions), never restated, and
// every value the core's to check (layout.request, a SaveRequest).
struct RepackArgs {
    std::string input;
    std::string output;
    LayoutArgs layout; // shared with `plan`; --checksum, --force, --wait... too
    bool progress = false;
    std::string sharedData; // a folder: the data file all its graphs share
    std::vector<std::string> models; // a folder: the graphs to save (default: all)
};

// Sizes of the data files `model` reads now, by absolute path: an in-place save may stop using
// (and remove) some of them, and the report should still say how big they were.
std::map<fs::path, uintmax_t> dataFileSizes(const Model& model, const fs::path& modelPath)
{
    std::map<fs::path, uintmax_t> sizes;
    const fs::path folder = fs::absolute(modelPath).parent_path();
    for (const auto& tensor : model.tensors()) {
        if (!tensor.isExternal())
            continue;
        const fs::path file = (folder / tensor.external->location()).lexically_normal();
        std::error_code ec;
        const uintmax_t bytes = fs::file_size(file, ec);
        if (!ec)
            sizes.emplace(file, bytes);
    }
    return sizes;
}

void printReport(const SaveReport& report, const std::map<fs::path, uintmax_t>& oldSizes)
{
    for (const auto& warning : report.warnings)
        std::cerr << "onnx-repack: warning: " << printable(warning) << '\n';
    if (report.unchanged) {
        std::cout << "nothing to change: " << printable(report.modelPath.string()) << " and its "
                  << report.dataFiles.size()
                  << " data file(s) are already laid out as planned; nothing written "
                     "(--rewrite writes them anyway)\n";
        return;
    }
    std::cout << (report.warnings.empty() ? "wrote " : "saved with a warning: ")
              << printable(report.modelPath.string()) << ": " << report.externalTensors
              << " external and " << report.inlineTensors << " inline tensors, "
              << formatBytes(report.bytesWritten) << " in " << report.dataFiles.size()
              << " data file(s) and the model, " << formatSeconds(report.seconds) << '\n';
    printPaddingNote(report.paddingBytes, report.dataBytes);
    const fs::path folder = fs::absolute(report.modelPath).parent_path();
    for (const auto& file : report.noLongerUsed) {
        const fs::path absolute = (folder / file).lexically_normal();
        std::cout << "no longer used by the model: " << printable(file.string());
        std::error_code ec;
        uintmax_t bytes = fs::file_size(absolute, ec);
        if (ec) {
            auto old = oldSizes.find(absolute);
            if (old != oldSizes.end()) {
                bytes = old->second;
                ec.clear();
            }
        }
        if (!ec)
            std::cout << " (" << formatBytes(bytes) << ")";
        std::cout << '\n';
    }
    for (const auto& file : report.removed)
        std::cout << "removed " << printable(file.string()) << '\n';
}

// For transformers.js: how many chunks of the data file the model config must name.
void printChunkCount(const SaveReport& report, const SaveOptions& options)
{
    const fs::path folder = report.modelPath.parent_path();
    size_t chunks = 0;
    while (std::find(report.dataFiles.begin(), report.dataFiles.end(),
               (folder / chunkName(options.dataFile, chunks)).lexically_normal())
        != report.dataFiles.end())
        ++chunks;
    std::cout << "use_external_data_format: " << chunks << " (transformers.js_config in "
              << "config.json: {\"use_external_data_format\": {\""
              << report.modelPath.filename().string() << "\": " << chunks << "}})\n";
}

void printFolderReport(const FolderSaveReport& report)
{
    if (report.sharedData.empty()) { // each graph with its own data file
        for (const auto& warning : report.warnings)
            std::cerr << "onnx-repack: warning: " << printable(warning) << '\n';
        std::cout << (report.unchanged ? "nothing to change: " : "wrote ") << report.models.size()
                  << " graph(s) into " << printable(report.folder.string())
                  << ", each with its own data file: " << report.externalTensors
                  << " external tensors, " << formatBytes(report.bytesAfter) << " written, "
                  << formatSeconds(report.seconds) << '\n';
        for (const auto& file : report.removed)
            std::cout << "removed " << printable(file.string()) << '\n';
        return;
    }
    for (const auto& warning : report.warnings)
        std::cerr << "onnx-repack: warning: " << printable(warning) << '\n';
    if (report.unchanged) {
        std::cout << "nothing to change: the " << report.models.size() << " graph(s) of "
                  << printable(report.folder.string()) << " already share "
                  << printable(report.sharedData.filename().string())
                  << " as planned; nothing written (--rewrite writes them anyway)\n";
        return;
    }
    std::cout << (report.warnings.empty() ? "wrote " : "saved with a warning: ")
              << report.models.size() << " graph(s) into " << printable(report.folder.string())
              << ": " << report.externalTensors << " external tensors ("
              << formatBytes(report.externalBytes) << ") stored once each in "
              << printable(report.sharedData.filename().string()) << " ("
              << formatBytes(report.sharedBytes) << ", " << report.sharedRanges << " distinct), "
              << formatSeconds(report.seconds) << '\n';
    std::cout << "the graphs and their data: " << formatBytes(report.bytesBefore) << " before, "
              << formatBytes(report.bytesAfter) << " after\n";
    for (const auto& file : report.removed)
        std::cout << "removed " << printable(file.string()) << " (no model reads it)\n";
}

int repackFolder(const RepackArgs& args)
{
    // A folder of a Hub repository is saved into a local folder, never in place.
    if (!outputModelFor(args.input, args.output))
        return Usage;
    auto parsed = folderSaveOptions(args.layout, args.output, args.sharedData, args.models);
    if (!parsed)
        return Usage;
    FolderSaveOptions options = std::move(*parsed);
    options.controls.cancel = commandToken();
    ProgressBar bar;
    if (args.progress)
        options.controls.progress = [&bar](const Progress& p) { bar.update(p); };
    // Each attempt reads the folder anew; a remote one that changed meanwhile is not retried.
    const auto attempt = [&](bool) -> Result<FolderSaveReport> {
        commandStep("reading the folder " + shownArgument(args.input), kNothingWritten);
        auto folder = openFolderArgument(args.input, options.controls.cancel);
        if (!folder)
            return folder.error();
        if (args.sharedData.empty()) // each graph commits on its own: the error names them
            commandStep("saving into " + args.output,
                "the graphs saved before the stop are complete, the others as they were", true);
        else
            commandStep("saving into " + args.output, kNothingWritten);
        return saveFolder(**folder, args.output, options);
    };
    auto report = retryWhileChanged(attempt, !namesRemoteModel(args.input), [&] {
        std::cerr << "onnx-repack: a graph of " << printable(args.input)
                  << " was changed by another save meanwhile; reading the folder again\n";
    });
    bar.finish();
    if (!report)
        return reportFailure(report.error());
    printFolderReport(*report);
    return Ok;
}

int repack(const RepackArgs& args)
{
    if (namesFolderArgument(args.input))
        return repackFolder(args);
    if (!args.sharedData.empty() || !args.models.empty()) {
        std::cerr << "onnx-repack: --shared-data and --models repack a folder of graphs; "
                  << printable(args.input) << " is one model\n";
        return Usage;
    }
    if (!outputModelFor(args.input, args.output))
        return Usage;
    auto layout = parseLayoutOptions(args.layout, args.output);
    if (!layout)
        return Usage;
    SaveOptions options = std::move(*layout);
    options.cancel = commandToken();
    // A model read from a server is written to the local output, each byte it needs
    // fetched once; one changed on the server meanwhile fails the save (Changed), never retried
    // as a local model another save changed is.
    const bool remote = namesRemoteModel(args.input);

    const auto created = createOutputFolders(args.output);
    if (!created)
        return reportFailure(created.error());
    ProgressBar bar;
    if (args.progress)
        options.progress = [&bar](const Progress& p) { bar.update(p); };
    // Another save of the same model may hold the folder's lock; this one waits (--wait) and,
    // when that save changed IN meanwhile, reads IN again and applies its own options to what
    // is there now, instead of failing on a model that is no longer on disk.
    std::map<fs::path, uintmax_t> oldSizes;
    const auto attempt = [&](bool) -> Result<SaveReport> {
        options.placements.clear(); // --plan is read again for the model as it is now
        commandStep("opening " + shownArgument(args.input), kNothingWritten);
        auto model = openModelArgument(args.input, options.cancel);
        if (!model)
            return model.error();
        if (Status s = readPlanOption(args.layout, **model, options); !s)
            return s.error();
        if (!remote)
            oldSizes = dataFileSizes(**model, args.input);
        commandStep("saving " + args.output, kNothingWritten);
        return save(**model, args.output, options);
    };
    auto report = saveRetrying(attempt, !remote, [&] {
        std::cerr << "onnx-repack: " << printable(args.input)
                  << " was changed by another save meanwhile; reading it again to apply "
                     "these options\n";
    });
    bar.finish();
    if (!report) {
        removeCreatedFolders(*created);
        return reportFailure(report.error());
    }
    printReport(*report, oldSizes);
    if (options.shardNaming == ShardNaming::Chunks)
        printChunkCount(*report, options);
    return Ok;
}

} // namespace

Command addRepack(CLI::App& app)
{
    auto* sub = app.add_subcommand("repack", "Rewrite where tensors live, safely");
    auto args = std::make_shared<RepackArgs>();
    const std::string defaultWait = secondsText(SaveOptions().lockWaitMs / 1000.0);
    SaveRequest& request = args->layout.request;
    sub->add_option("IN", args->input,
           "The model to read (" + std::string(kModelForms)
               + "), or a folder of graphs (a path or hf://ORG/REPO[@REV]/DIR)")
        ->required();
    sub->add_option("-o,--output", args->output,
           "The model to write, a local path (may equal a local IN); a missing folder is created; "
           "a model read from a server is fetched once into it, never downloaded first. For a "
           "folder IN: the folder to write (may equal IN)")
        ->required();
    sub->add_option("--shared-data", args->sharedData,
           "For a folder IN: the one data file all its graphs read, each distinct weight "
           "stored once; the data files no model reads any more are removed. Without it, each "
           "graph is saved with its own data file")
        ->type_name("NAME");
    sub->add_option("--models", args->models,
           "For a folder IN: the graphs to save (default: every .onnx in it)")
        ->delimiter(',')
        ->type_name("A.onnx,B.onnx");
    addLayoutOptions(*sub, args->layout);
    sub->add_flag("--checksum", request.checksum, "Write a SHA-1 checksum per external tensor");
    sub->add_flag("--force", request.force,
        "Replace files that other models in the folder use, or that no model uses");
    sub->add_flag("--remove-unused", request.removeUnused,
        "After an in-place save, remove data files the model no longer uses (never one another "
        "model in the folder references)");
    sub->add_option("--wait", request.wait,
           "Seconds to wait for another save of the same folder to finish, 0 = fail at once, "
               + std::string(kWaitAsLongAsItTakes) + " = as long as it takes (default "
               + defaultWait + ")")
        ->type_name("SECONDS");
    sub->add_flag("--rewrite", request.rewrite,
        "Write the files even when an in-place save would change nothing (by default it writes "
        "nothing and says so)");
    sub->add_flag("--progress", args->progress, "Draw a progress bar on stderr");
    return {sub, [args] { return repack(*args); }};
}

} // namespace repack::cli
