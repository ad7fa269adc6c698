#include "duplicate_names.h"

#include "name_hash.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>

namespace repack {

// Tensors of one scope sharing a name: onnx.checker rejects two initializers (or sparse
// initializers) of one name in a graph, so that is an error; attribute tensors may repeat a
// name for onnx, but diffs and plans match tensors by scope and name, so that is a warning.
// Reported at the first of each group, in index order.
void reportDuplicateNames(const std::vector<TensorInfo>& tensors, std::vector<Problem>& problems)
{
    // Sorted by the hash of scope and name, so that only tensors whose hashes are equal are
    // compared by their strings. A scope is hashed once for the tensors sharing its text.
    using HP = HashedPosition;
    std::vector<uint64_t> keyed(tensors.size());
    const std::string* scopeText = nullptr;
    size_t scope = 0;
    for (uint32_t i = 0; i < keyed.size(); ++i) {
        if (&tensors[i].scope.str() != scopeText) {
            scopeText = &tensors[i].scope.str();
            scope = std::hash<std::string>{}(*scopeText);
        }
        const size_t both = scope
            ^ (std::hash<std::string>{}(tensors[i].name) + 0x9e3779b97f4a7c15ull + (scope << 6)
                + (scope >> 2));
        keyed[i] = HP::pack(static_cast<uint32_t>(both), i);
    }
    // In place, by hash then position: 8 bytes a tensor and no second buffer (24 MB more at
    // 3,000,000 tensors for a radix sort).
    std::sort(keyed.begin(), keyed.end());
    auto same = [&](uint32_t a, uint32_t b) {
        return tensors[a].name == tensors[b].name && tensors[a].scope == tensors[b].scope;
    };
    std::vector<std::pair<uint32_t, Problem>> found;
    std::vector<uint32_t> group;
    constexpr uint64_t kTaken = UINT32_MAX; // a position already in a group
    for (size_t begin = 0; begin < keyed.size();) {
        size_t end = begin + 1;
        while (end < keyed.size() && HP::hash(keyed[end]) == HP::hash(keyed[begin]))
            ++end;
        // Within a run of one hash (almost always one tensor), the groups of equal names, each
        // in index order.
        for (size_t i = begin; i < end; ++i) {
            if (HP::position(keyed[i]) == kTaken)
                continue;
            group.assign(1, HP::position(keyed[i]));
            for (size_t j = i + 1; j < end; ++j)
                if (HP::position(keyed[j]) != kTaken
                    && same(HP::position(keyed[i]), HP::position(keyed[j]))) {
                    group.push_back(HP::position(keyed[j]));
                    keyed[j] |= kTaken;
                }
            if (group.size() < 2)
                continue;
            const TensorInfo& t = tensors[group.front()];
            const auto values = std::count_if(group.begin(), group.end(),
                [&](uint32_t g) { return tensors[g].kind != TensorKind::Attribute; });
            const bool invalid = values >= 2;
            found.emplace_back(group.front(),
                Problem{invalid ? Severity::Error : Severity::Warning, t.qualifiedName(),
                    std::string(code::DuplicateName),
                    t.qualifiedName() + ": " + std::to_string(group.size()) + " tensors of scope '"
                        + t.scope + "' are named '" + t.name + "'"
                        + (invalid ? "; onnx.checker rejects duplicate initializer names"
                                   : "; diffs and plan files cannot tell them apart")
                        + "; fix: rename all but one"});
        }
        begin = end;
    }
    std::sort(
        found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [first, p] : found)
        problems.push_back(std::move(p));
}

} // namespace repack
