// Machine-readable reports (SPEC section 6): `inspect --json`, `verify --json`, `diff --json`
// and `plan --diff --json` (`plan --json` is the plan file format, in placement_plan.h). Each is
// written to a stream as it is produced (JsonStream, laid out as nlohmann's dump(2)),
// newline-terminated.
#pragma once

#include "core/plan/save_options.h"
#include "core/problem.h"
#include "diff.h"
#include "plan_diff.h"

#include <nlohmann/json_fwd.hpp>

#include <iosfwd>
#include <vector>

namespace repack {

class JsonStream;
class Model;

inline constexpr const char* kInspectSchema = "onnx-repack/inspect/1";
inline constexpr const char* kVerifySchema = "onnx-repack/verify/1";
inline constexpr const char* kDiffSchema = "onnx-repack/diff/1";
inline constexpr const char* kPlanDiffSchema = "onnx-repack/plan-diff/1";
inline constexpr const char* kFolderSchema = "onnx-repack/folder/1";

struct FolderInspection;

// {"schema", "model", "tensors", "files", "totals", "problems"}; `folderProblems` (housekeeping
// of the model's folder, the storage audit) follow the model's own problems. The files' padding
// is counted against `alignment` (core/plan/file_layout.h): the audit's (AuditOptions).
void writeInspectJson(std::ostream& out, const Model& model,
    const std::vector<Problem>& folderProblems = {}, uint64_t alignment = kDefaultAlignment);
// writeInspectJson's document as one value (for the open benchmark): its jsonText is that text.
nlohmann::ordered_json inspectJson(const Model& model,
    const std::vector<Problem>& folderProblems = {}, uint64_t alignment = kDefaultAlignment);

// {"schema", "model", "ok", "external_tensors", "external_bytes", "problems"}.
void writeVerifyJson(std::ostream& out, const Model& model, const std::vector<Problem>& problems);

// diffModels(a, b) as {"schema", "added": [{"scope", "name", "a"?, "b"?}], "removed", ...}, each
// side's place as {"storage", "location", "offset", "length"} (external) or {"storage"}.
void writeDiffJson(
    std::ostream& out, const Model& a, const Model& b, const std::vector<DiffEntry>& entries);
// diffPlan(model, plan) in diff JSON's shape, the model now as "a" and after the save as "b":
// {"schema", "added", "removed", "moved", "storage_changed", "content_changed", "unchanged"}
// (a plan adds, removes and changes no content: those stay empty), then "files": [{"location",
// "change": "new"|"unused"|"resized"|"unchanged", "before": {"bytes", "padding_bytes",
// "orphaned_bytes"}?, "after": {"bytes", "padding_bytes", "orphaned_bytes"}?}] and "totals":
// {"tensors", "changed", "to_inline_bytes", "to_external_bytes"}.
void writePlanDiffJson(std::ostream& out, const PlanDiff& diff);
// The fields of writePlanDiffJson's document after "schema", into an object `json` is in.
void writePlanDiffFields(JsonStream& json, const PlanDiff& diff);

// inspectFolder's result (`inspect DIR --json`): {"schema", "folder", "models": [{"path",
// "tensors", "inline_bytes", "external_bytes", "files", "loaders": {"onnx", "onnxruntime",
// "onnx_ir"}, "error"?}], "files": [{"location", "bytes", "used_by"}], "shared": [{"bytes",
// "copies", "tensors": [{"model", "scope", "name"}]}], "duplicated_bytes", "problems":
// [{"severity", "model", "tensor", "code", "message"}]}. A model that did not load has null
// counts and loaders, and its "error".
nlohmann::ordered_json folderJson(const FolderInspection& folder);
void writeFolderJson(std::ostream& out, const FolderInspection& folder);

} // namespace repack
