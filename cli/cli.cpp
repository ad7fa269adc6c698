#include "cli.h"

#include "command_token.h"
#include "commands.h"
#include "terminal_text.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <new>
#include <vector>

namespace repack::cli {

int exitCodeFor(const Error& error)
{
    return kindInfo(error.kind).exitCode; // the one table (core/result.h)
}

int run(int argc, const char* const* argv)
{
    CLI::App app{"See and safely rewrite how ONNX models store their weights.", "onnx-repack"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "onnx-repack " REPACK_VERSION); // the project() version
    std::vector<Command> commands;
    for (auto add : {addInspect, addVerify, addRepack, addPlan, addDiff, addClean}) {
        commands.push_back(add(app));
        addTimeoutOption(*commands.back().subcommand); // the options every command shares
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr
            << "onnx-repack: " << e.what() << "\n"
            << "usage: onnx-repack {inspect|verify|repack|plan|diff|clean} ... (see --help)\n";
        return Usage;
    }
    for (const auto& command : commands) {
        if (!command.subcommand->parsed())
            continue;
        if (!startCommand(command.subcommand->get_name()))
            return Usage;
        // The core turns running out of memory into an error where its work begins; what the
        // commands build around it (tables, JSON) is caught here, never an abort.
        try {
            return commandExit(command.action());
        } catch (const std::bad_alloc&) {
            std::string line;
            for (int i = 1; i < argc; ++i)
                line += (i > 1 ? " " : "") + std::string(argv[i]);
            std::cerr << "onnx-repack: out of memory running '" << printable(line)
                      << "' (more than this process may allocate; nothing was written)\n";
            return Failed;
        }
    }
    return Usage;
}

} // namespace repack::cli
