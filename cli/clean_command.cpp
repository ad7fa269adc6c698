#include "cli.h"
#include "command_token.h"
#include "commands.h"
#include "terminal_text.h"

#include "core/format.h"
#include "core/save/clean.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

namespace repack::cli {
namespace {

// `onnx-repack clean PATH`: finishes what dead saves left in the folder of a model, or of each
// model of a folder (SPEC 5a): interrupted commits rolled forward, leftovers removed; in a
// folder that holds no model yet (a repack stopped before its commit), the leftovers.
int clean(const std::string& path)
{
    // Each step leaves a complete state: a stop between two keeps what the first did.
    commandStep("cleaning " + path, "what was finished stays so; run clean again for the rest");
    auto cleaned = repack::clean(path, commandToken());
    if (!cleaned)
        return reportFailure(cleaned.error());
    for (const auto& model : cleaned->finished)
        std::cout << "finished the interrupted save of " << printable(model.string())
                  << " (its data now has its final names)\n";
    uint64_t total = 0;
    for (const auto& e : cleaned->removed) {
        std::cout << "removed " << printable(e.path.string()) << " (" << formatBytes(e.bytes)
                  << ")\n";
        total += e.bytes;
    }
    for (const auto& w : cleaned->warnings)
        std::cerr << "onnx-repack: warning: " << printable(w) << '\n';
    if (cleaned->removed.empty() && cleaned->finished.empty() && cleaned->warnings.empty())
        std::cout << "no leftovers of dead saves beside " << printable(path) << '\n';
    else if (!cleaned->removed.empty())
        std::cout << cleaned->removed.size() << " leftover(s) removed, " << formatBytes(total)
                  << " freed\n";
    return Ok;
}

} // namespace

Command addClean(CLI::App& app)
{
    auto* sub = app.add_subcommand(
        "clean", "Finish saves that died after their commit and remove their leftover temporaries");
    auto path = std::make_shared<std::string>();
    sub->add_option("PATH", *path,
           "The .onnx file whose folder is cleaned, or a folder: of models, or one a save "
           "stopped before its first model was written")
        ->required();
    return {sub, [path] { return clean(*path); }};
}

} // namespace repack::cli
