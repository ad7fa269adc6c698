#include "open_windows.h"

#include "folder_window.h"
#include "main_window.h"

#include "core/remote/model_source.h"

#include <QFileInfo>

namespace ui {

bool namesFolder(const QString& path)
{
    return QFileInfo(path).isDir() || repack::namesHubFolder(path.toStdString());
}

QList<QWidget*> openWindows(const QStringList& paths)
{
    QList<QWidget*> windows;
    for (const QString& path : paths) {
        if (namesFolder(path)) {
            auto* window = new FolderWindow;
            window->setAttribute(Qt::WA_DeleteOnClose);
            window->show();
            window->openFolder(path);
            windows << window;
            continue;
        }
        auto* window = new MainWindow;
        window->setAttribute(Qt::WA_DeleteOnClose);
        window->show();
        window->openFile(path);
        windows << window;
    }
    return windows;
}

} // namespace ui
