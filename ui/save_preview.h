// The repack panel's preview sentence: what a planned save would move, in words.
#pragma once

#include <QString>

namespace repack {
struct SavePlan;
}

namespace ui {

struct ModelSnapshot;

QString describePlan(const repack::SavePlan& plan, const ModelSnapshot& current);

} // namespace ui
