// Top-level windows on the screen they open on: clamped to its available area, and their state
// kept per screen size and scale, since pane sizes left at one scale do not fit another.
#pragma once

#include <QByteArray>
#include <QString>

class QWidget;

namespace ui {

// `key` ("window/geometry") for the screen `window` is on, at its scale:
// "window/911x512@1.5/geometry" (the screen's size in the app's pixels, then its scale: a
// 1366x768 screen at 150 %).
QString screenKey(const QString& key, const QWidget* window);
// Shrinks `window` to the screen's available area and moves it inside, now and again when it is
// shown and its frame is known (never below its minimum size: the layouts keep that within the
// screens the app supports).
void fitOnScreen(QWidget* window);
// Restores `saved` (QWidget::saveGeometry) only when the geometry it gives lies inside the
// screen's available area; otherwise the window keeps its geometry and false is returned.
bool restoreFittingGeometry(QWidget* window, const QByteArray& saved);

} // namespace ui
