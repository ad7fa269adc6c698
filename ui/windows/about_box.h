// Help > About Onnx Repack, the same box from every window.
#pragma once

class QWidget;

namespace ui {

void showAbout(QWidget* parent);

} // namespace ui
