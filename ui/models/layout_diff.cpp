#include "layout_diff.h"

#include "model_snapshot.h"

#include "core/inspect/plan_diff.h"
#include "core/plan/save_plan.h"

#include <QCoreApplication>
#include <QDir>
#include <QHash>

#include <algorithm>

namespace ui {
namespace {

QString qs(const std::string& text)
{
    return QString::fromUtf8(text.data(), qsizetype(text.size()));
}

// Lane 0 is inline storage; data files follow by location. Locations are compared cleaned
// ("./w.bin" and "w.bin" are one file), shown as the model spells them.
class Lanes {
public:
    explicit Lanes(LayoutDiff& diff)
        : m_diff(diff)
    {
        DiffLane inlineLane;
        inlineLane.isInline = true;
        m_diff.lanes.push_back(inlineLane);
    }
    void note(const QString& location)
    {
        // Neighbouring tensors mostly share their file: skip the cleaning for a repeat.
        if (location == m_last)
            return;
        m_last = location;
        const QString key = QDir::cleanPath(location);
        if (!m_names.contains(key))
            m_names.insert(key, location);
    }
    // After every location was noted: one lane each, sorted.
    void create()
    {
        QStringList keys = m_names.keys();
        std::sort(keys.begin(), keys.end());
        for (const QString& key : keys) {
            m_index.insert(key, int(m_diff.lanes.size()));
            DiffLane lane;
            lane.location = m_names.value(key);
            m_diff.lanes.push_back(lane);
        }
    }
    int operator()(const QString& location) const
    {
        return m_index.value(QDir::cleanPath(location), -1);
    }

private:
    QString m_last;
    LayoutDiff& m_diff;
    QHash<QString, QString> m_names;
    QHash<QString, int> m_index;
};

void noteSnapshot(Lanes& lanes, const ModelSnapshot& snap)
{
    for (const repack::FileLayout& file : snap.layouts)
        lanes.note(qs(file.location));
    for (const TensorRow& row : snap.tensors) {
        if (row.external)
            lanes.note(row.storage);
    }
}

LaneSide& sideOf(DiffLane& lane, bool after)
{
    return after ? lane.after : lane.before;
}

DiffPlace& placeOf(DiffTensor& tensor, bool after)
{
    return after ? tensor.after : tensor.before;
}

// A data file's size, its padding, orphaned and header gaps and their totals, as `file` has them.
void addGaps(LaneSide& side, const repack::FileLayout& file)
{
    side.bytes = file.bytes;
    side.padding = file.paddingBytes;
    side.orphaned = file.orphanedBytes;
    for (const repack::Region& region : file.regions) {
        if (region.type == repack::RegionType::Padding
            || region.type == repack::RegionType::Orphaned)
            side.gaps.push_back(
                {region.offset, region.length, region.type == repack::RegionType::Orphaned});
        else if (region.type == repack::RegionType::Header)
            side.gaps.push_back({region.offset, region.length, false, true});
    }
}

// Side `after` of lane `l` from `file`: its size, gaps and totals, and where each of its tensors
// is (the diff tensor `diffIndex[region.tensor]`; -1: none).
void fillFile(LayoutDiff& diff, int l, const repack::FileLayout& file,
    const std::vector<int>& diffIndex, bool after)
{
    LaneSide& side = sideOf(diff.lanes[size_t(l)], after);
    side.present = true;
    addGaps(side, file);
    for (const repack::Region& region : file.regions) {
        if (region.type != repack::RegionType::Tensor)
            continue;
        const int d = region.tensor >= 0 && size_t(region.tensor) < diffIndex.size()
            ? diffIndex[size_t(region.tensor)]
            : -1;
        if (d < 0)
            continue;
        DiffPlace& place = placeOf(diff.tensors[size_t(d)], after);
        place.lane = l;
        place.offset = region.offset;
        place.length = region.length;
        side.tensors.push_back(d);
    }
}

// Fills one side of `diff` from a snapshot: `diffIndex[row]` is the diff tensor of each row
// (-1: none). Inline tensors are laid end to end in declaration order; data files as the
// snapshot's layout has them (tensors, padding, orphaned gaps).
void fillFromSnapshot(LayoutDiff& diff, const Lanes& lanes, const ModelSnapshot& snap,
    const std::vector<int>& diffIndex, bool after)
{
    LaneSide& inlineSide = sideOf(diff.lanes[0], after);
    for (qsizetype r = 0; r < snap.tensors.size(); ++r) {
        const int d = diffIndex[size_t(r)];
        if (d < 0)
            continue;
        const TensorRow& row = snap.tensors[r];
        DiffPlace& place = placeOf(diff.tensors[size_t(d)], after);
        place.row = int(r);
        place.external = row.external;
        place.storage = row.external ? row.storage : QStringLiteral("inline");
        if (!row.external) {
            place.lane = 0;
            place.offset = inlineSide.bytes;
            place.length = row.bytes;
            inlineSide.bytes += row.bytes;
            inlineSide.tensors.push_back(d);
            inlineSide.present = true;
        }
    }
    std::vector<char> placed(diff.lanes.size(), 0);
    for (const repack::FileLayout& file : snap.layouts)
        fillFile(diff, lanes(qs(file.location)), file, diffIndex, after);
    // External tensors whose reference did not resolve are in no layout: place them where
    // they claim to be.
    for (qsizetype r = 0; r < snap.tensors.size(); ++r) {
        const int d = diffIndex[size_t(r)];
        const TensorRow& row = snap.tensors[r];
        if (d < 0 || !row.external)
            continue;
        DiffPlace& place = placeOf(diff.tensors[size_t(d)], after);
        if (place.lane >= 0)
            continue;
        place.lane = lanes(row.storage);
        place.offset = row.offset;
        place.length = row.length;
        LaneSide& side = sideOf(diff.lanes[size_t(place.lane)], after);
        side.present = true;
        side.tensors.push_back(d);
        side.bytes = std::max(side.bytes, row.offset + row.length);
        placed[size_t(place.lane)] = 1;
    }
    for (size_t l = 0; l < placed.size(); ++l) {
        if (!placed[l])
            continue;
        auto& list = sideOf(diff.lanes[l], after).tensors;
        std::stable_sort(list.begin(), list.end(), [&](int x, int y) {
            return placeOf(diff.tensors[size_t(x)], after).offset
                < placeOf(diff.tensors[size_t(y)], after).offset;
        });
    }
}

// Inline first, then the files on both sides, then those only before, then those only after:
// ribbons from files that go away run down to the files that replace them.
void orderLanes(LayoutDiff& diff)
{
    auto rank = [](const DiffLane& lane) {
        if (lane.isInline)
            return 0;
        if (lane.before.present && lane.after.present)
            return 1;
        return lane.before.present ? 2 : 3;
    };
    std::vector<int> order(diff.lanes.size());
    for (size_t l = 0; l < order.size(); ++l)
        order[l] = int(l);
    std::stable_sort(order.begin(), order.end(),
        [&](int x, int y) { return rank(diff.lanes[size_t(x)]) < rank(diff.lanes[size_t(y)]); });
    std::vector<int> newIndex(order.size());
    std::vector<DiffLane> lanes;
    lanes.reserve(order.size());
    for (size_t l = 0; l < order.size(); ++l) {
        newIndex[size_t(order[l])] = int(l);
        lanes.push_back(std::move(diff.lanes[size_t(order[l])]));
    }
    diff.lanes = std::move(lanes);
    for (DiffTensor& t : diff.tensors) {
        if (t.before.lane >= 0)
            t.before.lane = newIndex[size_t(t.before.lane)];
        if (t.after.lane >= 0)
            t.after.lane = newIndex[size_t(t.after.lane)];
    }
}

} // namespace

std::vector<repack::TensorBefore> tensorsBefore(const ModelSnapshot& snap)
{
    std::vector<repack::TensorBefore> before;
    before.reserve(size_t(snap.tensors.size()));
    for (const TensorRow& row : snap.tensors) {
        repack::TensorBefore t{
            row.scope.toStdString(), row.name.toStdString(), row.bytes, {false, {}, 0, row.bytes}};
        if (row.external)
            t.place = {true, row.storage.toStdString(), row.offset, row.length};
        before.push_back(std::move(t));
    }
    return before;
}

QString changeKindName(ChangeKind kind)
{
    auto tr = [](const char* text) { return QCoreApplication::translate("LayoutDiff", text); };
    switch (kind) {
    case ChangeKind::Unchanged:
        return tr("unchanged");
    case ChangeKind::Moved:
        return tr("moved");
    case ChangeKind::ToInline:
        return tr("to inline");
    case ChangeKind::ToExternal:
        return tr("to external");
    case ChangeKind::NewFile:
        return tr("new file");
    case ChangeKind::Added:
        return tr("added");
    case ChangeKind::Removed:
        return tr("removed");
    case ChangeKind::ContentChanged:
        return tr("content changed");
    }
    return {};
}

size_t LayoutDiff::count(ChangeKind kind) const
{
    return size_t(std::count_if(
        tensors.begin(), tensors.end(), [kind](const DiffTensor& t) { return t.kind == kind; }));
}

LayoutDiff beforeAfterDiff(const ModelSnapshot& current, const repack::SavePlan& plan)
{
    LayoutDiff diff;
    diff.beforeTitle = QCoreApplication::translate("LayoutDiff", "now");
    diff.afterTitle = QCoreApplication::translate("LayoutDiff", "after");
    const size_t n = std::min(size_t(current.tensors.size()), plan.tensors.size());
    diff.tensors.resize(n);
    std::vector<int> identity(size_t(current.tensors.size()), -1);
    for (size_t i = 0; i < n; ++i) {
        identity[i] = int(i);
        diff.tensors[i].name = current.tensors[qsizetype(i)].name;
        diff.tensors[i].scope = current.tensors[qsizetype(i)].scope;
    }

    Lanes lanes(diff);
    noteSnapshot(lanes, current);
    for (const std::string& file : plan.files)
        lanes.note(qs(file));
    lanes.create();
    fillFromSnapshot(diff, lanes, current, identity, false);

    // After: exactly the plan. Inline tensors end to end; each file as the core's plannedLayout
    // has it, its gaps told apart as the layout map's (padding, or orphaned: a range a tensor
    // moved out of while the others kept their place).
    LaneSide& inlineAfter = diff.lanes[0].after;
    for (size_t i = 0; i < n; ++i) {
        const repack::PlannedTensor& planned = plan.tensors[i];
        DiffPlace& place = diff.tensors[i].after;
        place.row = int(i);
        place.external = planned.external;
        if (planned.external) {
            place.storage = qs(plan.files[size_t(planned.file)]);
            continue;
        }
        place.storage = QStringLiteral("inline");
        place.lane = 0;
        place.offset = inlineAfter.bytes;
        place.length = current.tensors[qsizetype(i)].bytes;
        inlineAfter.bytes += place.length;
        inlineAfter.tensors.push_back(int(i));
        inlineAfter.present = true;
    }
    for (size_t f = 0; f < plan.files.size(); ++f)
        fillFile(diff, lanes(qs(plan.files[f])), repack::plannedLayout(plan, f), identity, true);

    // What changes is the core's call (the CLI's `plan --diff` says the same); the lanes above
    // only place it.
    const repack::PlanDiff changes
        = repack::diffPlan(tensorsBefore(current), current.layouts, plan);
    for (size_t i = 0; i < n && i < changes.tensors.size(); ++i)
        diff.tensors[i].kind = changes.tensors[i].kind;
    // The .onnx is not written yet: its size changes by the bytes that move in or out of it.
    diff.protobufBefore = current.protobufBytes;
    diff.protobufAfter = current.protobufBytes + changes.toInlineBytes;
    diff.protobufAfter -= std::min(diff.protobufAfter, changes.toExternalBytes);
    diff.protobufAfterEstimated = true;
    orderLanes(diff);
    return diff;
}

LayoutDiff compareDiff(const ModelSnapshot& a, const ModelSnapshot& b,
    const std::vector<repack::DiffEntry>& entries, bool contentCompared)
{
    LayoutDiff diff;
    diff.beforeTitle = QStringLiteral("A");
    diff.afterTitle = QStringLiteral("B");
    diff.protobufBefore = a.protobufBytes;
    diff.protobufAfter = b.protobufBytes;
    diff.tensors.resize(entries.size());
    std::vector<int> inA(size_t(a.tensors.size()), -1);
    std::vector<int> inB(size_t(b.tensors.size()), -1);
    const std::string* lastScope = nullptr;
    for (size_t k = 0; k < entries.size(); ++k) {
        const repack::DiffEntry& e = entries[k];
        DiffTensor& t = diff.tensors[k];
        // The snapshots' names are already converted; the scopes repeat (shared QStrings).
        if (e.a >= 0 && e.a < a.tensors.size())
            t.name = a.tensors[e.a].name;
        else if (e.b >= 0 && e.b < b.tensors.size())
            t.name = b.tensors[e.b].name;
        else
            t.name = qs(e.name);
        if (!lastScope || *lastScope != e.scope) {
            lastScope = &e.scope;
            t.scope = qs(e.scope);
        } else {
            t.scope = diff.tensors[k - 1].scope;
        }
        if (e.a >= 0 && size_t(e.a) < inA.size())
            inA[size_t(e.a)] = int(k);
        if (e.b >= 0 && size_t(e.b) < inB.size())
            inB[size_t(e.b)] = int(k);
    }
    Lanes lanes(diff);
    noteSnapshot(lanes, a);
    noteSnapshot(lanes, b);
    lanes.create();
    fillFromSnapshot(diff, lanes, a, inA, false);
    fillFromSnapshot(diff, lanes, b, inB, true);
    for (size_t k = 0; k < entries.size(); ++k) {
        DiffTensor& t = diff.tensors[k];
        t.kind = entries[k].kind;
        t.contentPending = !contentCompared && entries[k].a >= 0 && entries[k].b >= 0
            && t.kind != ChangeKind::ContentChanged;
    }
    orderLanes(diff);
    return diff;
}

std::vector<int> applyContentDiff(LayoutDiff& diff, const std::vector<repack::DiffEntry>& entries)
{
    std::vector<int> changed;
    if (entries.size() != diff.tensors.size())
        return changed;
    for (size_t k = 0; k < entries.size(); ++k) {
        DiffTensor& t = diff.tensors[k];
        const ChangeKind kind = entries[k].kind;
        if (kind != t.kind || t.contentPending)
            changed.push_back(int(k));
        t.kind = kind;
        t.contentPending = false;
    }
    return changed;
}

} // namespace ui
