// Machine-readable reports (SPEC section 6): `inspect --json` and `verify --json`.
#pragma once

#include "problem.h"

#include <nlohmann/json_fwd.hpp>

#include <vector>

namespace repack {

class Model;

inline constexpr const char* kInspectSchema = "onnx-repack/inspect/1";
inline constexpr const char* kVerifySchema = "onnx-repack/verify/1";

nlohmann::ordered_json modelJson(const Model& model);
nlohmann::ordered_json problemsJson(const std::vector<Problem>& problems);
// `folderProblems` (housekeeping of the model's folder) follow the model's own problems.
nlohmann::ordered_json inspectJson(
    const Model& model, const std::vector<Problem>& folderProblems = {});
nlohmann::ordered_json verifyJson(const Model& model, const std::vector<Problem>& problems);

} // namespace repack
