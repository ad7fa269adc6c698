// MainWindow's menus and their actions; Save and Save As also sit on the repack panel.
#include "main_window.h"

#include "recent_files.h"
#include "ui/util/display_name.h"
#include "ui/views/layout_map_view.h"
#include "ui/views/repack_panel.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QLineEdit>
#include <QMenuBar>
#include <QTableView>

namespace ui {

void MainWindow::createActions()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    m_openAction = file->addAction(
        QIcon::fromTheme(QStringLiteral("document-open")), tr("&Open…"), this, &MainWindow::open);
    m_openAction->setShortcut(QKeySequence::Open);
    QAction* openUrl = file->addAction(tr("Open &URL…"), this, &MainWindow::openUrlDialog);
    openUrl->setObjectName(QStringLiteral("openUrlAction"));
    openUrl->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    openUrl->setToolTip(tr("A model on a server (https://, hf://ORG/REPO/PATH, s3://BUCKET/KEY), "
                           "or a folder of the Hub (hf://ORG/REPO/onnx), read-only: Save As… "
                           "writes a local copy of a model"));
    QAction* openFolder = file->addAction(tr("Open &Folder…"), this, &MainWindow::openFolderDialog);
    openFolder->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    openFolder->setToolTip(tr("A folder of graphs as one unit: the weights they repeat, and one "
                              "data file they can share (or drop a folder on the window)"));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    m_recentMenu->setObjectName(QStringLiteral("recentMenu"));
    m_recent = new RecentFiles(m_recentMenu, this);
    // A URL as File > Open URL… opens it: a folder of the Hub in a folder window.
    connect(m_recent, &RecentFiles::openRequested, this,
        [this](const QString& path) { isRemoteName(path) ? this->openUrl(path) : openFile(path); });
    m_reloadAction = file->addAction(
        QIcon::fromTheme(QStringLiteral("view-refresh")), tr("Re&load"), this, &MainWindow::reload);
    m_reloadAction->setShortcut(QKeySequence::Refresh);
    QAction* compare = file->addAction(tr("&Compare With…"), this, &MainWindow::compareWithFile);
    compare->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    compare->setToolTip(tr("Compare the open model's layout and bytes with another model "
                           "(or drop a model with Shift held)"));
    file->addSeparator();
    m_saveAction = file->addAction(
        QIcon::fromTheme(QStringLiteral("document-save")), tr("&Save"), this, &MainWindow::save);
    m_saveAction->setShortcut(QKeySequence::Save);
    m_saveAsAction = file->addAction(QIcon::fromTheme(QStringLiteral("document-save-as")),
        tr("Save &As…"), this, &MainWindow::saveAs);
    m_saveAsAction->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    QAction* close = file->addAction(tr("&Close Window"), this, &QWidget::close);
    close->setShortcut(QKeySequence::Close);
    QAction* quit = file->addAction(tr("&Quit"), qApp, &MainWindow::quitAll);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* copy = edit->addAction(tr("&Copy Tensor Names"), this, &MainWindow::copyNames);
    copy->setShortcut(QKeySequence::Copy);
    QAction* selectAll = edit->addAction(tr("Select &All"), m_table, &QTableView::selectAll);
    selectAll->setShortcut(QKeySequence::SelectAll);
    QAction* find = edit->addAction(tr("&Find…"), this, [this] {
        m_filter->setFocus();
        m_filter->selectAll();
    });
    find->setShortcut(QKeySequence::Find);
    addPlanActions(file, edit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    QAction* fit = view->addAction(tr("Zoom Map to &Fit"), m_map, &LayoutMapView::zoomToFit);
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    QAction* zoomIn = view->addAction(tr("Zoom Map &In"), this,
        [this] { m_map->setZoom(m_map->zoom() * 2, m_map->viewport()->width() / 2); });
    zoomIn->setShortcut(QKeySequence::ZoomIn);
    QAction* zoomOut = view->addAction(tr("Zoom Map &Out"), this,
        [this] { m_map->setZoom(m_map->zoom() / 2, m_map->viewport()->width() / 2); });
    zoomOut->setShortcut(QKeySequence::ZoomOut);
    view->addSeparator();
    for (QDockWidget* dock : findChildren<QDockWidget*>())
        view->addAction(dock->toggleViewAction());

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Onnx Repack"), this, &MainWindow::about);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);

    m_panel->addButtons({m_saveAction, m_saveAsAction});
}

} // namespace ui
