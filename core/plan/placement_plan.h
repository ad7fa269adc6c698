// Placement plan files (SPEC 5b, schema onnx-repack/plan/1): what `onnx-repack plan --json`
// prints and the GUI exports, and what `repack --plan` and the GUI's import read back.
#pragma once

#include "core/result.h"
#include "save_options.h"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace repack {

class Model;
struct FileLayout;
struct SavePlan;

inline constexpr const char* kPlanSchema = "onnx-repack/plan/1";

// Every tensor of `model` as `plan` (planSave for `modelPath`, the model being written) places
// it: {"schema", "model", "tensors": [{"scope", "name", "storage": "inline"|"external",
// "location", "offset", "length"}], "files": [{"location", "bytes", "padding_bytes",
// "orphaned_bytes", "alignment", "alignment_from"}]}; location, offset and
// length only for external tensors.
nlohmann::ordered_json planJson(
    const Model& model, const SavePlan& plan, const std::filesystem::path& modelPath);

// planJson written to `out` as it is produced: the text of a plan file (laid out as dump(2),
// newline-terminated; invalid UTF-8 in a name becomes U+FFFD).
void writePlanJson(std::ostream& out, const Model& model, const SavePlan& plan,
    const std::filesystem::path& modelPath);

// The alignment a file's padding was counted against, added to its JSON entry (here and in
// `inspect --json`): "alignment", and "alignment_from": "option" (the save's
// option, or its default: no file records the alignment it was written with).
void addAlignmentJson(nlohmann::ordered_json& entry, const FileLayout& layout);

// writePlanJson's text as a string, for export.
std::string planFileText(
    const Model& model, const SavePlan& plan, const std::filesystem::path& modelPath);

// Reads a plan file's text back as SaveOptions::placements for `model` (parallel to its tensors):
// only scope, name, storage and location count; tensors the file does not name stay Auto,
// unknown keys are ignored. "external" without a location means the save's data file.
// Errors name `fileName` and the tensor: malformed JSON, another schema, a tensor the model
// does not have (or has twice under one scope + name), a tensor named twice, a storage other
// than "inline"/"external", a STRING tensor made external.
Result<std::vector<TensorPlacement>> readPlan(
    const Model& model, std::string_view jsonText, std::string_view fileName);

// readPlan of a file on disk; fails when it cannot be read.
Result<std::vector<TensorPlacement>> readPlanFile(
    const Model& model, const std::filesystem::path& file);

} // namespace repack
