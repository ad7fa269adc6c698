#include "cli.h"
#include "commands.h"
#include "terminal_text.h"

#include "core/format.h"
#include "core/save/clean.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

namespace repack::cli {
namespace {

// `onnx-repack clean MODEL`: removes what dead saves left in the model's folder (SPEC 5a).
int clean(const std::string& path)
{
    auto removed = removeLeftovers(path);
    if (!removed) {
        std::cerr << "onnx-repack: " << printable(removed.error().message) << '\n';
        return exitCodeFor(removed.error());
    }
    uint64_t total = 0;
    for (const auto& e : *removed) {
        std::cout << "removed " << printable(e.path.string()) << " (" << formatBytes(e.bytes)
                  << ")\n";
        total += e.bytes;
    }
    if (removed->empty())
        std::cout << "no leftovers of dead saves beside " << printable(path) << '\n';
    else
        std::cout << removed->size() << " leftover(s) removed, " << formatBytes(total)
                  << " freed\n";
    return Ok;
}

} // namespace

Command addClean(CLI::App& app)
{
    auto* sub = app.add_subcommand("clean", "Remove leftover temporaries of saves that died");
    auto path = std::make_shared<std::string>();
    sub->add_option("MODEL", *path, "The .onnx file whose folder is cleaned")->required();
    return {sub, [path] { return clean(*path); }};
}

} // namespace repack::cli
