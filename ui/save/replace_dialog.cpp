#include "replace_dialog.h"

#include "ui/util/shown_lines.h"

#include "core/save/save_conflicts.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QPushButton>
#include <QStringList>

namespace ui {
namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("ui::ReplaceDialog", text);
}

QString fileName(const std::filesystem::path& path)
{
    return QString::fromStdString(path.filename().string());
}

} // namespace

QStringList describeConflicts(const std::vector<repack::SaveConflict>& conflicts)
{
    QStringList lines;
    for (const repack::SaveConflict& conflict : conflicts) {
        const QString file = fileName(conflict.file);
        if (conflict.users.empty())
            lines << tr("%1: no model in the folder uses it.").arg(file);
        for (const auto& user : conflict.users)
            lines << tr("%1 reads %2: after this save it would read wrong weights.")
                         .arg(fileName(user), file);
    }
    return lines;
}

QString anotherDataName(const QDir& modelDir, const QString& dataName)
{
    // The extension stays (a reader may go by it); a name with none, or only a leading dot,
    // gets the number at its end.
    const int slash = dataName.lastIndexOf(u'/');
    const QString folder = dataName.left(slash + 1);
    const QString name = dataName.mid(slash + 1);
    const int dot = name.lastIndexOf(u'.');
    const QString stem = dot > 0 ? name.left(dot) : name;
    const QString suffix = dot > 0 ? name.mid(dot) : QString();
    const QString free = freeFileName(QDir(modelDir.filePath(folder)), stem, suffix, 2);
    return free.isEmpty() ? QString() : folder + free;
}

ReplaceAnswer askToReplace(QWidget* parent, const std::vector<repack::SaveConflict>& conflicts,
    const QString& whose, const QString& freeName)
{
    const QStringList lines = describeConflicts(conflicts);
    QStringList details;
    for (const repack::SaveConflict& conflict : conflicts)
        details << QString::fromStdString(conflict.message);
    // A file many models read: every line in the details too.
    const QString said = shownLines(lines);
    if (isCut(lines))
        details = lines + details;
    QMessageBox box(QMessageBox::Warning, tr("Replace data file?"),
        tr("Saving will replace files that are not only %1:\n\n%2\n\nThe models that read "
           "them are not told: without checksums their verify still passes. Replace them?")
            .arg(whose, said),
        QMessageBox::NoButton, parent);
    box.setDetailedText(details.join(u'\n'));
    QPushButton* replace = box.addButton(tr("Replace"), QMessageBox::DestructiveRole);
    QPushButton* newFile = nullptr;
    if (!freeName.isEmpty()) {
        newFile = box.addButton(tr("Write %1 Instead").arg(freeName), QMessageBox::ActionRole);
        newFile->setToolTip(tr("Leave those files as they are and write %1 data to %2, a "
                               "name no file in the folder has")
                                .arg(whose, freeName));
    }
    QPushButton* cancel = box.addButton(QMessageBox::Cancel);
    box.setDefaultButton(cancel);
    box.setEscapeButton(cancel);
    box.exec();
    if (box.clickedButton() == replace)
        return ReplaceAnswer::Replace;
    if (newFile && box.clickedButton() == newFile)
        return ReplaceAnswer::NewName;
    return ReplaceAnswer::Cancel;
}

QString freeFileName(const QDir& folder, const QString& stem, const QString& suffix, int first)
{
    for (int n = first; n < 1000; ++n) {
        const QString name
            = n == 1 ? stem + suffix : QStringLiteral("%1-%2%3").arg(stem).arg(n).arg(suffix);
        if (!QFileInfo::exists(folder.filePath(name)))
            return name;
    }
    return {};
}

} // namespace ui
