// A save as a user asks for it, by name (the CLI's flags, the Python package's keyword
// arguments, the desktop app's fields) and the one function that turns it into SaveOptions:
// every front end checks and applies it here, so they share every default, refusal and message
// and cannot drift apart. Plans (placements), progress and cancel are the caller's to add.
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
struct SaveRequest {
    std::string target; // ort, optimum, web, hub (core/plan/targets.h)
    // The save's data file. With `keep` only pins that name no file go there (the desktop
    // app's "save's data file"), every other tensor staying where it is: `dataForPins` says the
    // caller brings such pins; without it, keep excludes data (no tensor would go there).
    std::string data;
    bool dataForPins = false;
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
    // Data files to compact, keeping placement (SaveOptions::compactFiles); only with keep.
    std::vector<std::string> compact;

    // How long to wait for another save of the same folders, in seconds as parseLockWait()
    // reads them; empty: SaveOptions' default.
    std::string wait;
    bool checksum = false;
    bool force = false;
    bool removeUnused = false;
    bool rewrite = false;
};

// What each option is called where the user typed it, for the messages; the CLI's flags by
// default.
struct OptionNames {
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
    std::string_view compact = "--compact";
    std::string_view wait = "--wait";
};

struct AppliedRequest {
    SaveOptions options;
    std::vector<std::string> notes; // said to the user, the save still goes ahead
};

// The SaveOptions `request` asks for when writing `outputModel` (a target names the data file
// after it): the target's settings, then the explicit options over them. Fails, before any
// model is loaded, on a size or a wait that does not parse, an alignment that is not 0 or a
// power of two up to kMaxAlignment, an unknown target, order or format, and options that
// exclude each other (inline with data, threshold, shard size, target or format; safetensors
// with dedupe or an alignment; keep with any layout option, and with data unless dataForPins;
// compact without keep): an
// Error of kind Usage, its
// message naming the option as `names` spell it.
Result<AppliedRequest> applySaveRequest(const SaveRequest& request,
    const std::filesystem::path& outputModel, const OptionNames& names = {});

// The alignment `text` names as the option `option` takes it (a size; 0 or a power of two up to
// kMaxAlignment), or a Usage error naming the option, with applySaveRequest's words.
Result<uint64_t> parseAlignment(const std::string& text, std::string_view option);

// How long a save waits for another save of its folders, as the user typed it (`option` names
// where: "--wait", "wait"): seconds, 0 or more, fractions allowed, "inf" (kWaitAsLongAsItTakes)
// or anything longer than int milliseconds meaning as long as it takes; SaveOptions::lockWaitMs.
// Anything else is an Error of kind Usage. applySaveRequest's parser, public for messages.
Result<int> parseLockWait(std::string_view text, std::string_view option);
inline constexpr std::string_view kWaitAsLongAsItTakes = "inf";

// A size as the user would type it and parseSize() reads back exactly: "0", "1000", "4KiB".
std::string sizeText(uint64_t bytes);

} // namespace repack
