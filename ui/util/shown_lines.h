// A long list in a message box (the files a save would replace, the data files a folder save
// removes): the first lines are said, every one in the box's details, which scroll. A box
// naming every file would grow taller than the screen, its buttons out of reach.
#pragma once

#include <QString>
#include <QStringList>

namespace ui {

// How many lines of a list a message box says before "… and N more".
inline constexpr qsizetype kShownLines = 8;

// The first kShownLines of `lines`, a line each, and when there are more a last line saying how
// many and that Show Details… lists them all (the caller puts them in the details then:
// isCut()).
QString shownLines(const QStringList& lines);

// Whether shownLines(lines) leaves lines out.
inline bool isCut(const QStringList& lines)
{
    return lines.size() > kShownLines;
}

} // namespace ui
