// The repack options each model was last saved with, remembered across launches: what a user
// typed for one model is theirs for that model, and never pre-filled for the next (that one
// starts from the core's defaults).
#pragma once

#include <QVariantMap>

namespace ui {

// The repack panel's values (RepackPanel::settingValues) the model at `path` was last saved
// with; empty when it never was here.
QVariantMap optionsSavedWith(const QString& path);
// Remembers `values` for the model at `path`; the oldest of more than kRememberedModels are
// forgotten.
void rememberOptions(const QString& path, const QVariantMap& values);
inline constexpr int kRememberedModels = 100;

} // namespace ui
