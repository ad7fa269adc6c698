#include "save_request.h"

#include "core/format.h"
#include "targets.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace repack {
namespace {

// Every refusal here is a usage error (Error::usage): the options never work, whatever the model.

std::string inQuotes(std::string_view text)
{
    return "'" + std::string(text) + "'";
}

// Parses a size into `out` when it was given; otherwise leaves the default in place. A text
// that is not a size adds its message to `errors`, so every bad size is named at once.
void size(std::string_view option, const std::string& text, uint64_t& out, std::string& errors)
{
    if (text.empty())
        return;
    if (auto value = parseSize(text)) {
        out = *value;
        return;
    }
    errors.append(errors.empty() ? "" : "\n")
        .append(option)
        .append(": ")
        .append(inQuotes(text))
        .append(" is not a size (bytes, or a number with K/KiB/M/MiB/G/GiB)");
}

// The refusal of an alignment `option` was given as `text` that breaks the rule.
Error notAnAlignment(std::string_view option, const std::string& text)
{
    return Error::usage(
        std::string(option) + ": " + inQuotes(text) + " " + std::string(kAlignmentRule));
}

// The first pair of given options that exclude each other, as "A excludes B" (or one that
// needs another: "A goes with B"); empty if none.
std::string exclusion(const SaveRequest& r, const OptionNames& n)
{
    // Keeping every tensor where it is, the data file is only where pins that name none go.
    if (r.keep && !r.data.empty() && !r.dataForPins)
        return std::string(n.keep) + " excludes " + std::string(n.data);
    if (r.allInline) {
        const std::pair<bool, std::string_view> others[] = {{!r.threshold.empty(), n.threshold},
            {!r.data.empty(), n.data}, {!r.shardSize.empty(), n.shardSize},
            {!r.target.empty(), n.target}, {!r.format.empty(), n.format}};
        for (const auto& [given, name] : others)
            if (given)
                return std::string(n.allInline) + " excludes " + std::string(name);
    }
    if (!r.format.empty() && r.dedupe)
        return std::string(n.format) + " excludes " + std::string(n.dedupe);
    if (!r.compact.empty() && !r.keep)
        return std::string(n.compact) + " goes with " + std::string(n.keep)
            + " (a save laid out anew leaves no orphaned bytes to compact)";
    if (r.keep) {
        const std::pair<bool, std::string_view> others[] = {{!r.target.empty(), n.target},
            {!r.threshold.empty(), n.threshold}, {!r.align.empty(), n.align},
            {!r.alignThreshold.empty(), n.alignThreshold}, {!r.order.empty(), n.order},
            {r.allInline, n.allInline}, {!r.shardSize.empty(), n.shardSize}, {r.dedupe, n.dedupe},
            {!r.format.empty(), n.format}};
        for (const auto& [given, name] : others)
            if (given)
                return std::string(n.keep) + " excludes " + std::string(name);
    }
    return {};
}

} // namespace

Result<int> parseLockWait(std::string_view text, std::string_view option)
{
    const std::string copy(text);
    char* end = nullptr;
    const double seconds = std::strtod(copy.c_str(), &end);
    if (copy.empty() || end != copy.c_str() + copy.size() || std::isnan(seconds) || seconds < 0
        || std::isspace(static_cast<unsigned char>(copy.front())))
        return Error::usage(std::string(option) + ": " + inQuotes(text)
            + " is not a number of seconds (0 = fail at once if another save runs)");
    constexpr double kLongest = std::numeric_limits<int>::max();
    return seconds * 1000.0 >= kLongest ? std::numeric_limits<int>::max()
                                        : static_cast<int>(std::llround(seconds * 1000.0));
}

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

Result<uint64_t> parseAlignment(const std::string& text, std::string_view option)
{
    uint64_t alignment = 0;
    std::string errors;
    size(option, text, alignment, errors);
    if (!errors.empty())
        return Error::usage(errors);
    if (text.empty() || !validAlignment(alignment))
        return notAnAlignment(option, text);
    return alignment;
}

Result<AppliedRequest> applySaveRequest(
    const SaveRequest& request, const std::filesystem::path& outputModel, const OptionNames& names)
{
    if (std::string excluded = exclusion(request, names); !excluded.empty())
        return Error::usage(excluded);
    AppliedRequest result;
    SaveOptions& options = result.options;
    if (!request.target.empty()) {
        const Target* target = findTarget(request.target);
        if (!target)
            return Error::usage(std::string(names.target) + ": " + inQuotes(request.target)
                + " is not a target (one of " + targetNames() + ")");
        applyTarget(*target, outputModel, options);
    }
    std::string errors;
    size(names.threshold, request.threshold, options.threshold, errors);
    size(names.align, request.align, options.alignment, errors);
    size(names.alignThreshold, request.alignThreshold, options.alignThreshold, errors);
    size(names.shardSize, request.shardSize, options.shardSize, errors);
    if (!errors.empty())
        return Error::usage(errors);
    if (!request.format.empty() && request.format != "onnx" && request.format != "safetensors")
        return Error::usage(std::string(names.format) + ": " + inQuotes(request.format)
            + " is not a format (onnx or safetensors)");
    if (request.format == "safetensors") {
        // The format has no gaps between tensors: an alignment asked for cannot be kept.
        if (!request.align.empty() && options.alignment > 1)
            return Error::usage(std::string(names.align)
                + ": safetensors files hold tensors back to back, so they cannot be aligned ("
                + std::string(names.format) + " onnx can)");
        // A target's file names and limits still apply; its alignment cannot, which is said
        // (the audit in `inspect` then lists the tensors a reader cannot map).
        if (!request.target.empty() && options.alignment > 1)
            result.notes.push_back(std::string(names.target) + " " + request.target
                + " aligns tensors of " + sizeText(options.alignThreshold) + " and more to "
                + sizeText(options.alignment)
                + "; safetensors files hold tensors back to back, so this save does not ("
                + std::string(names.format) + " onnx can)");
        options.format = DataFormat::Safetensors;
        options.alignment = 0; // said: no file of the format can hold gaps
    }
    if (!validAlignment(options.alignment))
        return notAnAlignment(names.align, request.align);
    if (!request.order.empty()) {
        if (request.order != "declaration" && request.order != "size")
            return Error::usage(std::string(names.order) + ": " + inQuotes(request.order)
                + " is not an order (declaration or size)");
        options.order
            = request.order == "size" ? TensorOrder::SizeAscending : TensorOrder::Declaration;
    }
    if (!request.data.empty())
        options.dataFile = request.data;
    options.includeAttributes = !request.noAttributes;
    options.allInline = request.allInline;
    options.dedupe = request.dedupe;
    options.allowCorrupt = request.allowCorrupt;
    options.keepPlacement = request.keep;
    options.compactFiles = request.compact;
    options.dataOptionName = std::string(names.data);
    if (!request.wait.empty()) {
        auto wait = parseLockWait(request.wait, names.wait);
        if (!wait)
            return wait.error();
        options.lockWaitMs = *wait;
    }
    options.checksum = request.checksum;
    options.force = request.force;
    options.removeUnused = request.removeUnused;
    options.rewrite = request.rewrite;
    return result;
}

} // namespace repack
