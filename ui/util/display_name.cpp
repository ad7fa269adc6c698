#include "display_name.h"

#include <QDir>
#include <QFileInfo>
#include <QFontMetrics>

#include <algorithm>

namespace ui {
namespace {

constexpr QChar kEllipsis(0x2026);

QString named(const QString& name, const QString& folder)
{
    return QStringLiteral("%1 (%2)").arg(name, folder);
}

} // namespace

QString homePath(const QString& path)
{
    const QString absolute = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
    const QString home = QDir::cleanPath(QDir::homePath());
    QString out = absolute;
    if (home != QStringLiteral("/")) {
        if (absolute == home)
            out = QStringLiteral("~");
        else if (absolute.startsWith(home + u'/'))
            out = u'~' + absolute.mid(home.size());
    }
    return QDir::toNativeSeparators(out);
}

QString displayName(const QString& path, int characters)
{
    const QFileInfo file(QDir::cleanPath(QFileInfo(path).absoluteFilePath()));
    QString folder = homePath(file.path());
    if (folder.size() > characters && characters > 1) {
        // More of the end than of the start: the folders nearest the file tell models apart.
        const int head = (characters - 1) / 3;
        const int tail = characters - 1 - head;
        folder = folder.left(head) + kEllipsis + folder.right(tail);
    }
    return named(file.fileName(), folder);
}

QString displayName(const QString& path, const QFontMetrics& metrics, int width)
{
    const QFileInfo file(QDir::cleanPath(QFileInfo(path).absoluteFilePath()));
    const QString folder = homePath(file.path());
    const int room = width - metrics.horizontalAdvance(named(file.fileName(), QString()));
    return named(file.fileName(), metrics.elidedText(folder, Qt::ElideMiddle, std::max(room, 0)));
}

} // namespace ui
