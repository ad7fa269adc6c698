#include "shared_layout.h"

namespace repack {
Result<SharedLayout> layOutShared(const std::vector<const Model*>& models,
    const std::vector<SavePlan*>& plans, const SaveOptions& layout,
    const ProgressCallback& progress)
{
    std::vector<TensorRef> candidates;
    for (size_t g = 0; g < plans.size(); ++g)
        for (size_t t = 0; t < plans[g]->tensors.size(); ++t)
            if (plans[g]->tensors[t].external)
                candidates.push_back({g, t});
    auto groups = findIdenticalAcross(models, candidates, progress, layout.cancel);
    if (!groups)
        return groups.error();
    std::map<TensorRef, size_t> groupOf;
    for (size_t i = 0; i < groups->size(); ++i)
        for (TensorRef ref : (*groups)[i].tensors)
            groupOf[ref] = i;
    SharedLayout out;
    std::map<size_t, size_t> placed; // group -> range
    for (size_t g = 0; g < plans.size(); ++g) {
        SavePlan& plan = *plans[g];
        if (plan.files.empty())
            continue;
        for (size_t t : plan.fileOrder.front()) {
            PlannedTensor& p = plan.tensors[t];
            const auto group = groupOf.find({g, t});
            if (group != groupOf.end())
                if (auto at = placed.find(group->second); at != placed.end()) {
                    p.offset = out.ranges[at->second].offset;
                    continue;
                }
            p.offset = placedOffset(out.bytes, p.length, layout.alignmentRule());
            out.bytes = p.offset + p.length;
            if (group != groupOf.end())
                placed[group->second] = out.ranges.size();
            out.rangeOf[{g, t}] = out.ranges.size();
            out.ranges.push_back({g, t, p.offset, p.length, {}});
        }
    }
    for (auto [ref, group] : groupOf)
        if (!out.rangeOf.count(ref))
            out.rangeOf[ref] = placed.at(group);
    for (SavePlan* plan : plans)
        if (!plan->files.empty())
            plan->fileBytes = {out.bytes};
    return out;
}

Status checkSharedLayout(const LayoutOptions& layout, const std::string& sharedData)
{
    const char* refused = layout.format != DataFormat::Raw
        ? "the safetensors format (a shared file stores each content once, at ranges several "
          "graphs read; save each graph on its own for safetensors files)"
        : layout.allInline ? "bringing every tensor inline (there would be no shared data file)"
        : layout.shardSize ? "shards (the shared data file is one file)"
        : !layout.placements.empty()
        ? "placements of single tensors (a plan or pins are for one model; save that graph "
          "on its own)"
        : layout.keepPlacement
        ? "keeping every tensor where it is (a shared data file lays every weight out anew)"
        : !layout.dataFile.empty() && layout.dataFile != sharedData
        ? "another data file name (the shared data file is named by --shared-data)"
        : nullptr;
    if (refused)
        return Error::usage(
            std::string("a folder saved with one shared data file cannot take ") + refused);
    return {};
}

} // namespace repack
