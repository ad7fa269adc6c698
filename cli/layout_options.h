// The options `repack` and `plan` share: where tensors go and how data files are laid out,
// registered and parsed by one piece of code so both commands always agree.
#pragma once

#include "core/plan/save_options.h"
#include "core/plan/save_request.h"
#include "core/result.h"
#include "core/save/folder_save.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace repack {
class Model;
}

namespace repack::cli {

// The layout options as given (core/plan/save_request.h checks and applies them, for the
// Python package too), and the plan file.
struct LayoutArgs {
    SaveRequest request;
    std::string planFile; // --plan: a SPEC 5b plan file
};

// Registers --target, --data, --threshold, --align, --align-threshold, --order,
// --no-attributes, --inline, --shard-size, --dedupe, --format, --allow-corrupt, --plan, --keep
// and --compact on `sub`.
void addLayoutOptions(CLI::App& sub, LayoutArgs& args);

// The SaveOptions `args` ask for when writing `outputModel` (a target names the data file
// after it): the target's settings, then the explicit options over them. Sizes and names are
// checked before any model is loaded so a usage error is reported as one (exit 2); nullopt
// after saying why on stderr.
std::optional<SaveOptions> parseLayoutOptions(
    const LayoutArgs& args, const std::string& outputModel);

// The options of a folder save (`repack DIR` / `plan DIR`) writing into `outDir`: the layout
// options a folder takes (any other one given is refused, naming it), the shared data file and
// the graphs; nullopt after saying why on stderr.
std::optional<FolderSaveOptions> folderSaveOptions(const LayoutArgs& args,
    const std::string& outDir, const std::string& sharedData,
    const std::vector<std::string>& models);

// The model a repack of IN (a path or a URL: core/remote/model_source.h) writes:
// `output`, or IN itself (in place) when it is empty. A remote IN is only ever written to a local
// -o (in place is impossible), and -o is always a local path: nullopt after saying why on
// stderr (a usage error).
std::optional<std::string> outputModelFor(const std::string& input, const std::string& output);

// Reads --plan, when given, into `options.placements` for `model`; the plan file's error
// (naming the file and the tensor) otherwise.
Status readPlanOption(const LayoutArgs& args, const Model& model, SaveOptions& options);

// When alignment padding takes a tenth or more of the data files (`--align 16MiB
// --align-threshold 1` can multiply them), says how much on stdout; nothing otherwise.
void printPaddingNote(uint64_t paddingBytes, uint64_t dataBytes);

} // namespace repack::cli
