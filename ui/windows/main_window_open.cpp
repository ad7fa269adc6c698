// MainWindow: what opens beside the window's model: a model on a server (File > Open URL…), a
// folder of graphs, a Compare window, and models or folders dropped on the window.
#include "main_window.h"

#include "compare_window.h"
#include "folder_window.h"
#include "open_url_dialog.h"
#include "open_windows.h"
#include "recent_files.h"
#include "ui/util/display_name.h"

#include "core/file_names.h"
#include "core/remote/model_source.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
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

// The folder a file dialog starts in beside the open model: the home folder beside a URL.
QString besideModel(const ModelSnapshot& snapshot)
{
    if (snapshot.path.isEmpty() || snapshot.remote)
        return {};
    return QFileInfo(snapshot.path).absolutePath();
}

} // namespace

void MainWindow::openUrlDialog()
{
    QStringList urls;
    for (const QString& file : m_recent->files())
        if (isRemoteName(file))
            urls << file;
    OpenUrlDialog dialog(urls, this);
    if (dialog.exec() == QDialog::Accepted)
        openUrl(dialog.url());
}

bool MainWindow::openUrl(const QString& url)
{
    if (const QString why = OpenUrlDialog::urlError(url); !why.isEmpty() || url.isEmpty()) {
        m_lastError = why.isEmpty() ? tr("No URL given") : why;
        QMessageBox::warning(this, tr("Cannot open URL"), m_lastError);
        Q_EMIT openFailed(url, m_lastError);
        return false;
    }
    if (repack::namesHubFolder(url.toStdString())) {
        openFolder(url);
        return true;
    }
    return openFile(url);
}

void MainWindow::compareWithFile()
{
    if (m_snapshot.path.isEmpty()) {
        statusBar()->showMessage(tr("Open a model first, then compare it with another."), 5000);
        return;
    }
    const QString path = QFileDialog::getOpenFileName(this, tr("Compare With"),
        besideModel(m_snapshot), tr("ONNX models (*.onnx);;All files (*)"));
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
    const QString dir = QFileDialog::getExistingDirectory(
        this, tr("Open Folder of Graphs"), besideModel(m_snapshot));
    if (!dir.isEmpty())
        openFolder(dir);
}

FolderWindow* MainWindow::openFolder(const QString& dir)
{
    auto* window = new FolderWindow(this);
    window->setWindowFlag(Qt::Window);
    window->setAttribute(Qt::WA_DeleteOnClose);
    window->show();
    if (isRemoteName(dir)) {
        // Shown once read: remembered (without its query), or, never filled, closed.
        connect(
            window, &FolderWindow::inspected, this,
            [this, window, dir](bool ok) {
                if (ok) {
                    m_recent->add(dir);
                    return;
                }
                const QString error = window->lastError();
                const bool cancelled = window->wasCancelled();
                window->close();
                if (cancelled)
                    statusBar()->showMessage(tr("Opening %1 cancelled").arg(shownName(dir)), 5000);
                else
                    reportOpenFailure(dir, error, false);
            },
            Qt::SingleShotConnection);
    }
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
