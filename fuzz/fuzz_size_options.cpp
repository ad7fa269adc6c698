// Target "size_options": the SIZE and layout options as typed on a command line. The input is
// up to six newline-separated fields: --threshold, --align, --align-threshold, --shard-size,
// --order and --data (an empty field: not given). parseSize either refuses a text or reads a number
// that reads back the same when printed; parseLayoutOptions accepts only alignments SPEC 5a allows.
#include "fuzz_support.h"

#include "cli/layout_options.h"
#include "core/format.h"

#include <iostream>
#include <sstream>

namespace {
// parseLayoutOptions says why it refuses on std::cerr; libFuzzer and the sanitizers write to
// the stderr file descriptor directly and stay visible.
std::ostringstream refusals;
} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    std::cerr.rdbuf(refusals.rdbuf());
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace repack;
    using fuzz::require;
    const std::string text(reinterpret_cast<const char*>(data), size);
    if (auto bytes = parseSize(text)) {
        require(parseSize(std::to_string(*bytes)) == bytes, "a size that does not read back");
        (void)formatBytes(*bytes);
    }

    std::vector<std::string> fields;
    std::istringstream lines(text);
    for (std::string line; fields.size() < 6 && std::getline(lines, line);)
        fields.push_back(line);
    fields.resize(6);
    cli::LayoutArgs args;
    args.request.threshold = fields[0];
    args.request.align = fields[1];
    args.request.alignThreshold = fields[2];
    args.request.shardSize = fields[3];
    args.request.order = fields[4];
    args.request.data = fields[5];
    if (auto options = cli::parseLayoutOptions(args, "/nonexistent/out/model.onnx")) {
        require(fields[0].empty() || options->threshold == parseSize(fields[0]),
            "--threshold is not parseSize's");
        const uint64_t a = options->alignment;
        require(
            a == 0 || (a <= kMaxAlignment && (a & (a - 1)) == 0), "an alignment SPEC 5a refuses");
    }
    refusals.str({});
    return 0;
}
