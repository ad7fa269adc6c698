// Machine-readable reports (SPEC section 6): `inspect --json`, `verify --json` and `diff --json`
// (`plan --json` is the plan file format, in placement_plan.h).
#pragma once

#include "diff.h"
#include "problem.h"

#include <nlohmann/json_fwd.hpp>

#include <vector>

namespace repack {

class Model;

inline constexpr const char* kInspectSchema = "onnx-repack/inspect/1";
inline constexpr const char* kVerifySchema = "onnx-repack/verify/1";
inline constexpr const char* kDiffSchema = "onnx-repack/diff/1";

nlohmann::ordered_json modelJson(const Model& model);
nlohmann::ordered_json problemsJson(const std::vector<Problem>& problems);
// `folderProblems` (housekeeping of the model's folder) follow the model's own problems.
nlohmann::ordered_json inspectJson(
    const Model& model, const std::vector<Problem>& folderProblems = {});
nlohmann::ordered_json verifyJson(const Model& model, const std::vector<Problem>& problems);
// diffModels(a, b) as {"schema", "added": [{"scope", "name", "a"?, "b"?}], "removed", ...}, each
// side's place as {"storage", "location", "offset", "length"} (external) or {"storage"}.
nlohmann::ordered_json diffJson(
    const Model& a, const Model& b, const std::vector<DiffEntry>& entries);

} // namespace repack
