#include "shipped_files.h"

#include <QFileInfo>
#include <QMutex>
#include <QStringList>

namespace ui {
namespace {

QMutex mutex;
QStringList folders; // canonical paths

} // namespace

void addShippedFolder(const QString& folder)
{
    const QString canonical = QFileInfo(folder).canonicalFilePath();
    if (canonical.isEmpty())
        return;
    QMutexLocker lock(&mutex);
    if (!folders.contains(canonical))
        folders << canonical;
}

bool isShipped(const QString& path)
{
    if (path.isEmpty())
        return false;
    // The folder the file is (or would be) in: a file a save would create does not exist yet.
    const QString folder = QFileInfo(QFileInfo(path).absolutePath()).canonicalFilePath();
    if (folder.isEmpty())
        return false;
    QMutexLocker lock(&mutex);
    return folders.contains(folder);
}

} // namespace ui
