#include "plan_diff.h"

#include "core/model/model.h"
#include "core/plan/file_layout.h"
#include "core/plan/save_plan.h"

#include <algorithm>
#include <filesystem>
#include <map>

namespace repack {
namespace {

// "./w.bin" and "w.bin" are one file.
std::string fileKey(const std::string& location)
{
    return std::filesystem::path(location).lexically_normal().generic_string();
}

} // namespace

std::string_view planFileChange(const PlanDiffFile& file)
{
    if (!file.before)
        return "new";
    if (!file.after)
        return "unused";
    return file.bytesBefore == file.bytesAfter ? "unchanged" : "resized";
}

size_t PlanDiff::count(ChangeKind kind) const
{
    return static_cast<size_t>(std::count_if(tensors.begin(), tensors.end(),
        [kind](const PlanDiffTensor& t) { return t.kind == kind; }));
}

bool PlanDiff::changesNothing() const
{
    return count(ChangeKind::Unchanged) == tensors.size()
        && std::all_of(files.begin(), files.end(), [](const PlanDiffFile& f) {
               return f.before && f.after && f.bytesBefore == f.bytesAfter;
           });
}

PlanDiff diffPlan(const std::vector<TensorBefore>& before, const std::vector<FileLayout>& layouts,
    const SavePlan& plan)
{
    PlanDiff diff;
    std::map<std::string, PlanDiffFile> files;
    auto fileFor = [&](const std::string& location) -> PlanDiffFile& {
        PlanDiffFile& file = files[fileKey(location)];
        if (file.location.empty())
            file.location = location;
        return file;
    };
    for (const FileLayout& layout : layouts) {
        PlanDiffFile& file = fileFor(layout.location);
        file.before = true;
        file.bytesBefore = layout.bytes;
        file.paddingBefore = layout.paddingBytes;
        file.orphanedBefore = layout.orphanedBytes;
    }
    for (const TensorBefore& t : before)
        if (t.place.external)
            fileFor(t.place.location).before = true;
    std::vector<std::string> planKeys(plan.files.size());
    for (size_t f = 0; f < plan.files.size(); ++f) {
        planKeys[f] = fileKey(plan.files[f]);
        PlanDiffFile& file = fileFor(plan.files[f]);
        file.after = true;
        const FileLayout after = plannedLayout(plan, f);
        file.bytesAfter = after.bytes;
        file.paddingAfter = after.paddingBytes;
        file.orphanedAfter = after.orphanedBytes;
    }

    const size_t n = std::min(before.size(), plan.tensors.size());
    diff.tensors.resize(n);
    for (size_t i = 0; i < n; ++i) {
        PlanDiffTensor& t = diff.tensors[i];
        t.scope = before[i].scope;
        t.name = before[i].name;
        t.before = before[i].place;
        const PlannedTensor& planned = plan.tensors[i];
        const bool toFile = planned.external && planned.file >= 0
            && static_cast<size_t>(planned.file) < plan.files.size();
        if (toFile) {
            t.after = {true, plan.files[static_cast<size_t>(planned.file)], planned.offset,
                planned.length};
        } else {
            t.after = {false, {}, 0, before[i].bytes};
        }
        if (t.before.external && !t.after.external) {
            t.kind = ChangeKind::ToInline;
            diff.toInlineBytes += t.after.length;
        } else if (!t.before.external && t.after.external) {
            t.kind = ChangeKind::ToExternal;
            diff.toExternalBytes += t.after.length;
        } else if (!t.before.external) {
            t.kind = ChangeKind::Unchanged;
        } else {
            const std::string& key = planKeys[static_cast<size_t>(planned.file)];
            if (!files[key].before)
                t.kind = ChangeKind::NewFile;
            else if (key != fileKey(t.before.location) || t.after.offset != t.before.offset)
                t.kind = ChangeKind::Moved;
            else
                t.kind = ChangeKind::Unchanged;
        }
    }
    diff.files.reserve(files.size());
    for (auto& [key, file] : files)
        diff.files.push_back(std::move(file));
    return diff;
}

PlanDiff diffPlan(const Model& model, const SavePlan& plan)
{
    std::vector<TensorBefore> before;
    before.reserve(model.tensors().size());
    for (const TensorInfo& t : model.tensors()) {
        TensorBefore b{t.scope, t.name, t.byteSize(), {false, {}, 0, t.byteSize()}};
        if (t.isExternal())
            b.place = {true, t.external->location(), t.external->offset,
                t.external->length.value_or(t.byteSize())};
        before.push_back(std::move(b));
    }
    return diffPlan(before, computeLayout(model, plan.alignment), plan);
}

} // namespace repack
