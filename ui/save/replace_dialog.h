// The one question a save asks before it replaces files that are not only its own (SPEC 5a
// "Siblings"): the single save (ui/save/save_flow.h) and the folder save
// (ui/windows/folder_window.h) both name the models that would read wrong bytes and offer Replace,
// a free name instead, or Cancel (the default).
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

class QDir;
class QWidget;

namespace repack {
struct SaveConflict;
}

namespace ui {

// What the user answers to files in the way: replace them, write to the free name instead,
// or cancel.
enum class ReplaceAnswer { Replace, NewName, Cancel };

// Asks about `conflicts` (each naming its file and the models that read it; none: no model
// uses it), for a save of the files `whose` says ("this model's", "the folder's graphs'");
// offers "Write `freeName` Instead" when it is not empty.
ReplaceAnswer askToReplace(QWidget* parent, const std::vector<repack::SaveConflict>& conflicts,
    const QString& whose, const QString& freeName);

// The lines askToReplace shows of `conflicts`, one a model that would read wrong bytes (or a
// file no model uses); the save preview warns with them before Save is pressed.
QStringList describeConflicts(const std::vector<repack::SaveConflict>& conflicts);

// Another name for the data file `dataName` (relative to `modelDir`, as a save names it) that is
// in the way: the same name with the first free "-N" before its extension, N from 2
// ("weights.bin" gives "weights-2.bin", "model.onnx.data" gives "model.onnx-2.data"); empty
// when none up to 999 is free.
QString anotherDataName(const QDir& modelDir, const QString& dataName);

// A file name in `folder` that no file there has: "<stem><suffix>" (when `first` is 1), else
// "<stem>-2<suffix>", "<stem>-3<suffix>", ... from `first` on; empty when all up to 999 exist.
QString freeFileName(const QDir& folder, const QString& stem, const QString& suffix, int first);

} // namespace ui
