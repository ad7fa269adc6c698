#include "display_name.h"

#include "core/io/source_spec.h"

#include <QDir>
#include <QFileInfo>
#include <QFontMetrics>

#include <algorithm>
#include <utility>

namespace ui {
namespace {

constexpr QChar kEllipsis(0x2026);

QString named(const QString& name, const QString& folder)
{
    return QStringLiteral("%1 (%2)").arg(name, folder);
}

// The file name and the folder `path` is named by: a URL's as written (no query), a path's
// absolute, with "~".
std::pair<QString, QString> nameAndFolder(const QString& path)
{
    if (isRemoteName(path)) {
        QString shown = shownName(path);
        if (shown.endsWith(u'/'))
            shown.chop(1); // a folder (of the Hub): named by its last part, as a local one

        const qsizetype slash = shown.lastIndexOf(u'/');
        return {shown.mid(slash + 1), shown.left(slash)};
    }
    const QFileInfo file(QDir::cleanPath(QFileInfo(path).absoluteFilePath()));
    return {file.fileName(), homePath(file.path())};
}

} // namespace

bool isRemoteName(const QString& text)
{
    const auto spec = repack::parseSource(text.toStdString());
    return spec && spec->isRemote();
}

QString shownName(const QString& text)
{
    const auto spec = repack::parseSource(text.toStdString());
    return spec && spec->isRemote() ? QString::fromStdString(spec->display()) : text;
}

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
    auto [name, folder] = nameAndFolder(path);
    if (folder.size() > characters && characters > 1) {
        // More of the end than of the start: the folders nearest the file tell models apart.
        const int head = (characters - 1) / 3;
        const int tail = characters - 1 - head;
        folder = folder.left(head) + kEllipsis + folder.right(tail);
    }
    return named(name, folder);
}

QString displayName(const QString& path, const QFontMetrics& metrics, int width)
{
    const auto [name, folder] = nameAndFolder(path);
    const int room = width - metrics.horizontalAdvance(named(name, QString()));
    return named(name, metrics.elidedText(folder, Qt::ElideMiddle, std::max(room, 0)));
}

} // namespace ui
