// The app's `--screenshot OUT.png` mode: opens a view as a user would see it, waits until the
// workers have finished and the window has painted, and writes it to a PNG (for the README).
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>

namespace ui {

struct ScreenshotRequest {
    // "main" (the window with the largest external tensor selected), "placement" (the same
    // with the placement pane raised), "before-after" (the Before / after dock for a threshold
    // of 2 KiB and 64 KiB shards), "compare" (models[0] against models[1]), "folder" (the
    // folder models[0] as one unit: a path, or a folder of the Hub).
    QString view = QStringLiteral("main");
    QStringList models;
    QString out;
    QSize size{1400, 860};
};

QStringList screenshotViews();

// Runs the event loop until the picture is written (0) or cannot be (1: the reason is on
// stderr; 2: a request that cannot work, such as "compare" without two models).
int renderScreenshot(const ScreenshotRequest& request);

} // namespace ui
