// How the windows name a model or a folder to the user, in the window title, the prompts and
// File > Open Recent: the file name, then its folder as a path with "~" for the home folder,
// as editors do ("model.onnx (~/x/a)"), so that x/a/model.onnx and y/a/model.onnx never read
// alike. A long folder is elided in the middle, keeping where it starts and the folders nearest
// the file:
// - titles and prompts by a fixed character budget: a window manager cuts a long title at its
//   end (the part that tells folders apart) and a message box wraps, so neither has a width to
//   measure; the budget keeps the title's name visible on a 1024 px screen;
// - a menu entry by its width in the menu's font (QFontMetrics, Qt::ElideMiddle).
// A model opened from a URL (File > Open URL…) is named the same way by its address without
// secrets (SourceSpec::display(): no query string): "model.onnx (hf://org/repo/onnx)".
#pragma once

#include <QString>

class QFontMetrics;

namespace ui {

// Characters of a folder shown in a title or a prompt before it is elided in the middle.
inline constexpr int kFolderCharacters = 48;

// Whether `text` names a model on a server (http(s)://, hf://, s3://), not a local path: one
// opened read-only (core/io/source_spec.h).
bool isRemoteName(const QString& text);
// `text` as it may be shown and remembered: a URL without what may be secret, a path as given.
QString shownName(const QString& text);

// `path` (absolute or not) as an absolute path, the home folder written "~".
QString homePath(const QString& path);

// "model.onnx (~/x/a)": the file name and its folder, the folder elided in the middle past
// `characters`. A folder is named the same way ("a (~/x)").
QString displayName(const QString& path, int characters = kFolderCharacters);

// The same for a menu entry: the whole entry at most `width` pixels in `metrics`, the folder
// elided in the middle.
QString displayName(const QString& path, const QFontMetrics& metrics, int width);

} // namespace ui
