#include "diff.h"

#include "model.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace repack {
namespace {

Result<bool> sameContent(const Model& a, size_t ia, const Model& b, size_t ib)
{
    const TensorInfo& ta = a.tensors()[ia];
    const TensorInfo& tb = b.tensors()[ib];
    if (ta.dataType != tb.dataType || ta.shape != tb.shape || ta.bytes != tb.bytes)
        return false;
    auto ba = a.read(ia);
    if (!ba)
        return ba.error();
    auto bb = b.read(ib);
    if (!bb)
        return bb.error();
    const auto va = ba->bytes();
    const auto vb = bb->bytes();
    return va.size() == vb.size()
        && (va.empty() || std::memcmp(va.data(), vb.data(), va.size()) == 0);
}

bool sameExternalPlace(const TensorInfo& a, const TensorInfo& b)
{
    return a.external.location == b.external.location && a.external.offset == b.external.offset;
}

} // namespace

Result<std::vector<DiffEntry>> diffModels(const Model& a, const Model& b)
{
    std::unordered_map<std::string, size_t> inB;
    for (size_t i = 0; i < b.tensors().size(); ++i)
        inB.emplace(b.tensors()[i].qualifiedName(), i);
    std::vector<bool> matched(b.tensors().size(), false);
    std::vector<DiffEntry> out;
    for (size_t i = 0; i < a.tensors().size(); ++i) {
        const TensorInfo& ta = a.tensors()[i];
        DiffEntry entry{DiffStatus::Removed, ta.scope, ta.name, static_cast<int>(i), -1};
        auto it = inB.find(ta.qualifiedName());
        if (it != inB.end() && !matched[it->second]) {
            const size_t j = it->second;
            matched[j] = true;
            entry.b = static_cast<int>(j);
            const TensorInfo& tb = b.tensors()[j];
            auto same = sameContent(a, i, b, j);
            if (!same)
                return same.error();
            if (!*same)
                entry.status = DiffStatus::ContentChanged;
            else if (ta.isExternal() != tb.isExternal())
                entry.status = DiffStatus::StorageChanged;
            else if (ta.isExternal() && !sameExternalPlace(ta, tb))
                entry.status = DiffStatus::Moved;
            else
                entry.status = DiffStatus::Unchanged;
        }
        out.push_back(std::move(entry));
    }
    for (size_t j = 0; j < b.tensors().size(); ++j)
        if (!matched[j])
            out.push_back({DiffStatus::Added, b.tensors()[j].scope, b.tensors()[j].name, -1,
                static_cast<int>(j)});
    return out;
}

std::string_view diffStatusName(DiffStatus status)
{
    switch (status) {
    case DiffStatus::Added:
        return "added";
    case DiffStatus::Removed:
        return "removed";
    case DiffStatus::Moved:
        return "moved";
    case DiffStatus::StorageChanged:
        return "storage_changed";
    case DiffStatus::ContentChanged:
        return "content_changed";
    case DiffStatus::Unchanged:
        return "unchanged";
    }
    return "unchanged";
}

} // namespace repack
