// The keyword arguments save() and plan() share, read into the core's SaveRequest and
// checked by it (core/plan/save_request.h), the same code that checks the CLI's flags.
#pragma once

#include "core/plan/save_options.h"
#include "core/plan/save_request.h"

#include <pybind11/pybind11.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace repack {
class Model;
}

namespace repack::python {

// onnx_ir's size_threshold_bytes for ir.save(..., external_data=...): the default of save()
// when external_data is given (the CLI keeps the core's 1 KiB).
inline constexpr uint64_t kOnnxIrThreshold = 256;

struct LayoutKwargs {
    pybind11::object externalData, threshold, align, alignThreshold, order, shardSize, target,
        format, plan;
    bool allInline = false, dedupe = false, attributes = true, allowCorrupt = false;
    // Data files to compact (a name or a list of names), keeping placement: not a layout
    // keyword, it goes with none.
    pybind11::object compact = pybind11::none();
};

// The core's request for the layout keywords `args` (save() adds its own keywords to it).
SaveRequest layoutRequest(const LayoutKwargs& args);

// The SaveOptions `request` asks for when writing `outputModel` (applySaveRequest); raises
// UsageError with the core's message (naming the keyword) when they do not parse or exclude
// each other. The core's notes become Python warnings.
SaveOptions requestedOptions(const SaveRequest& request, const std::filesystem::path& outputModel);

// Reads `plan` (a plan file's path, or the plan document as a dict, e.g. from
// onnx_repack.plan()) into options.plan for `model`; raises Error naming the tensor.
void applyPlan(const pybind11::object& plan, const Model& model, SaveOptions& options);

} // namespace repack::python
