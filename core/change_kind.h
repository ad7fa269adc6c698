// What happened to one tensor between two layouts: model A against model B (core/inspect/diff.h),
// or the current model against the plan of a save (core/inspect/plan_diff.h). One vocabulary for
// the CLI, the JSON and the GUI; the GUI draws every kind in its own colour.
#pragma once

#include <string_view>

namespace repack {

enum class ChangeKind {
    Unchanged,
    Moved, // both external, another file or offset
    ToInline, // external before, inline after
    ToExternal, // inline before, external after
    NewFile, // external before, moved into a file that did not exist before
    Added, // only in B
    Removed, // only in A
    ContentChanged, // other bytes (or dtype, shape)
};
inline constexpr int kChangeKindCount = int(ChangeKind::ContentChanged) + 1;

// The key the CLI prints and the diff JSON groups by: "added", "removed", "moved" (NewFile
// too), "storage_changed" (ToInline and ToExternal), "content_changed", "unchanged".
std::string_view changeKey(ChangeKind kind);

// Those keys in output order, as `diff` prints its summary and its JSON arrays.
inline constexpr std::string_view kChangeKeys[]
    = {"added", "removed", "moved", "storage_changed", "content_changed", "unchanged"};

} // namespace repack
