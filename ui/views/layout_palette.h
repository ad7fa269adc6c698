// The colours of stored bytes, defined once for every view that draws a layout: the layout map,
// the before/after preview and the compare window. A padding gap, an orphaned range, a header or
// a selected tensor looks the same wherever it is drawn, and each view's legend lists what it
// draws (LegendEntry), so a test can check the legends agree without painting.
#pragma once

#include "ui/models/layout_diff.h"

#include "core/plan/file_layout.h"

#include <QColor>
#include <QString>

namespace ui::colors {

inline const QColor kTensor(0x3d, 0x7e, 0xc6);
inline const QColor kTensorAlternate(0x5a, 0x9b, 0xdc); // every other tensor, to see the seams
inline const QColor kSelected(0xf5, 0xb7, 0x00);
inline const QColor kPadding(0xc8, 0xcc, 0xd2);
inline const QColor kOrphaned(0xe8, 0x8a, 0x2e);
inline const QColor kOverlap(0xd0, 0x21, 0x2a);
inline const QColor kPinned(0x91, 0x41, 0xac);
inline const QColor kHeader(0x4a, 0x5a, 0x78); // a safetensors header

// A region of the layout map; `tensor` picks the alternate shade of neighbouring tensors.
QColor regionColor(repack::RegionType type, int tensor = 0);
// A gap of a diff lane: header, orphaned or padding, as the layout map draws them.
QColor gapColor(const DiffGap& gap);
// A tensor's kind of change in the diff views (the compare window's filters too).
QColor changeColor(ChangeKind kind);

} // namespace ui::colors

namespace ui {

// One swatch of a view's legend.
struct LegendEntry {
    QColor color;
    Qt::BrushStyle style = Qt::SolidPattern;
    QString text;
};

} // namespace ui
