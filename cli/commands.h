// The subcommands, each registered on the CLI11 app by its own file.
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace repack::cli {

// A registered subcommand and what to run when it was given; the action yields the exit code.
// Every command also takes the options of cli/command_token.h (--timeout), and hands
// commandToken() to all its work.
struct Command {
    CLI::App* subcommand;
    std::function<int()> action;
};

Command addInspect(CLI::App& app);
Command addVerify(CLI::App& app);
Command addRepack(CLI::App& app);
Command addPlan(CLI::App& app);
Command addDiff(CLI::App& app);
Command addClean(CLI::App& app);

} // namespace repack::cli
