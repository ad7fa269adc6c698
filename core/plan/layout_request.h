// The layout options a caller asks for by name (the CLI's flags, the Python package's keyword
// arguments) and the one function that turns them into SaveOptions: both front ends check and
// apply them here, so they share every default, refusal and message and cannot drift apart.
#pragma once

#include "core/result.h"
#include "save_options.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace repack {

// Each field as the user gave it; empty when not given: the target's value applies then, else
// SaveOptions' default. Sizes are text as parseSize() reads it ("4096", "1MiB").
struct LayoutRequest {
    std::string target; // ort, optimum, web, hub (core/plan/targets.h)
    std::string data;
    std::string threshold;
    std::string align;
    std::string alignThreshold;
    std::string order; // declaration or size
    bool noAttributes = false;
    bool allInline = false;
    std::string shardSize;
    bool dedupe = false;
    std::string format; // onnx (raw data files) or safetensors
    bool allowCorrupt = false;
    bool keep = false; // keep every tensor where it is (SaveOptions::keepPlacement)
};

// What each option is called where the user typed it, for the messages; the CLI's flags by
// default.
struct LayoutOptionNames {
    std::string_view target = "--target";
    std::string_view data = "--data";
    std::string_view threshold = "--threshold";
    std::string_view align = "--align";
    std::string_view alignThreshold = "--align-threshold";
    std::string_view order = "--order";
    std::string_view allInline = "--inline";
    std::string_view shardSize = "--shard-size";
    std::string_view dedupe = "--dedupe";
    std::string_view format = "--format";
    std::string_view keep = "--keep";
};

struct LayoutResult {
    SaveOptions options;
    std::vector<std::string> notes; // said to the user, the save still goes ahead
};

// The SaveOptions `request` asks for when writing `outputModel` (a target names the data file
// after it): the target's settings, then the explicit options over them. Fails, before any
// model is loaded, on a size that does not parse, an alignment that is not 0 or a power of two
// up to kMaxAlignment, an unknown target, order or format, and options that exclude each other
// (inline with data, threshold, shard size, target or format; safetensors with dedupe or an
// alignment): an Error of kind Usage, its message naming the option as `names` spell it.
Result<LayoutResult> applyLayoutRequest(const LayoutRequest& request,
    const std::filesystem::path& outputModel, const LayoutOptionNames& names = {});

// How long a save waits for another save of its folders, as the user typed it (`option` names
// where: "--wait", "wait"): seconds, 0 or more, fractions allowed, longer than int
// milliseconds meaning as long as it takes; SaveOptions::lockWaitMs. Anything else is an Error
// of kind Usage. The one parser of the CLI and the Python package.
Result<int> parseLockWait(std::string_view text, std::string_view option);

// A size as the user would type it and parseSize() reads back exactly: "0", "1000", "4KiB".
std::string sizeText(uint64_t bytes);

} // namespace repack
