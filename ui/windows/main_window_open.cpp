// MainWindow: what opens beside the window's model: a folder of graphs, a Compare window, and
// models or folders dropped on the window.
#include "main_window.h"

#include "compare_window.h"
#include "folder_window.h"
#include "open_windows.h"

#include "core/file_names.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMimeData>
#include <QStatusBar>
#include <QTimer>
#include <QUrl>

namespace ui {
namespace {

QStringList droppedModels(const QMimeData* mime)
{
    QStringList paths;
    if (!mime || !mime->hasUrls())
        return paths;
    for (const QUrl& url : mime->urls()) {
        if (url.isLocalFile()
            && repack::isModelName(QFileInfo(url.toLocalFile()).fileName().toStdString()))
            paths << url.toLocalFile();
    }
    return paths;
}

// The first local folder among dropped URLs: a folder of graphs opens as one unit.
QString droppedFolder(const QMimeData* mime)
{
    if (!mime || !mime->hasUrls())
        return {};
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile() && QFileInfo(url.toLocalFile()).isDir())
            return url.toLocalFile();
    return {};
}

} // namespace

void MainWindow::compareWithFile()
{
    if (m_snapshot.path.isEmpty()) {
        statusBar()->showMessage(tr("Open a model first, then compare it with another."), 5000);
        return;
    }
    const QString path = QFileDialog::getOpenFileName(this, tr("Compare With"),
        QFileInfo(m_snapshot.path).absolutePath(), tr("ONNX models (*.onnx);;All files (*)"));
    if (!path.isEmpty())
        compareWith(path);
}

CompareWindow* MainWindow::compareWith(const QString& path)
{
    if (m_snapshot.path.isEmpty())
        return nullptr;
    auto* window = new CompareWindow(this);
    window->setWindowFlag(Qt::Window);
    window->setAttribute(Qt::WA_DeleteOnClose);
    window->show();
    window->compare(m_snapshot.path, path);
    return window;
}

void MainWindow::openFolderDialog()
{
    const QString start
        = m_snapshot.path.isEmpty() ? QString() : QFileInfo(m_snapshot.path).absolutePath();
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open Folder of Graphs"), start);
    if (!dir.isEmpty())
        openFolder(dir);
}

FolderWindow* MainWindow::openFolder(const QString& dir)
{
    auto* window = new FolderWindow(this);
    window->setWindowFlag(Qt::Window);
    window->setAttribute(Qt::WA_DeleteOnClose);
    window->show();
    window->openFolder(dir);
    return window;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (!isSaving()
        && (!droppedModels(event->mimeData()).isEmpty()
            || !droppedFolder(event->mimeData()).isEmpty()))
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    if (const QString dir = droppedFolder(event->mimeData()); !dir.isEmpty()) {
        event->acceptProposedAction();
        openFolder(dir);
        return;
    }
    const QStringList paths = droppedModels(event->mimeData());
    if (paths.isEmpty() || isSaving())
        return;
    event->acceptProposedAction();
    // With Shift held, a model dropped on an open one is compared with it.
    if ((event->modifiers() & Qt::ShiftModifier) && !m_snapshot.path.isEmpty()) {
        compareWith(paths.constFirst());
        return;
    }
    // Asking about pending work waits until the drop has ended.
    if (hasPendingWork())
        QTimer::singleShot(0, this, [this, path = paths.constFirst()] { openFile(path); });
    else
        openFile(paths.constFirst());
    openWindows(paths.mid(1)); // further models each get a window of their own
}

} // namespace ui
