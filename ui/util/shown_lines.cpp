#include "shown_lines.h"

#include <QCoreApplication>

namespace ui {

QString shownLines(const QStringList& lines)
{
    QString said = lines.mid(0, kShownLines).join(u'\n');
    if (isCut(lines))
        said += u'\n'
            + QCoreApplication::translate("ui::ShownLines",
                "… and %n more (Show Details… lists them all).", nullptr,
                int(lines.size() - kShownLines));
    return said;
}

} // namespace ui
