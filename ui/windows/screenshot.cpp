#include "screenshot.h"

#include "compare_window.h"
#include "folder_window.h"
#include "main_window.h"
#include "open_windows.h"
#include "ui/models/diff_table_model.h"
#include "ui/models/placement_state.h"
#include "ui/save/save_preview.h"
#include "ui/views/layout_map_view.h"
#include "ui/views/repack_panel.h"

#include <QApplication>
#include <QDockWidget>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QLabel>
#include <QTableView>
#include <QTimer>

#include <cstdio>
#include <functional>

namespace ui {
namespace {

void complain(const QString& text)
{
    std::fprintf(stderr, "onnx-repack-gui: %s\n", qPrintable(text));
}

// Writes `widget` to `out` once the event loop has painted it, then ends the loop.
void grabLater(QWidget* widget, const QString& out)
{
    QTimer::singleShot(300, widget, [widget, out] {
        if (!widget->grab().save(out)) {
            complain(QStringLiteral("cannot write %1").arg(out));
            QApplication::exit(1);
            return;
        }
        QApplication::exit(0);
    });
}

// Calls `then` once `ready` holds, checking every 50 ms.
void whenReady(QObject* context, std::function<bool()> ready, std::function<void()> then)
{
    auto* timer = new QTimer(context);
    timer->setInterval(50);
    QObject::connect(timer, &QTimer::timeout, context, [timer, ready, then] {
        if (!ready())
            return;
        timer->stop();
        timer->deleteLater();
        then();
    });
    timer->start();
}

void selectLargestExternal(MainWindow& window)
{
    const auto& tensors = window.snapshot().tensors;
    int largest = -1;
    for (int i = 0; i < tensors.size(); ++i) {
        if (tensors[i].external && (largest < 0 || tensors[i].bytes > tensors[largest].bytes))
            largest = i;
    }
    if (largest >= 0) {
        const QModelIndex row = window.tensorView()->model()->index(largest, 0);
        window.tensorView()->selectionModel()->select(
            row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    }
}

// Pins as a user would before saving: the largest external tensor brought inline, the first
// two other external ones moved to a new data file, so the Planned column, the pane's counts
// and the map's outlines show.
void pinForShow(MainWindow& window)
{
    const auto& tensors = window.snapshot().tensors;
    QList<int> external;
    int largest = -1;
    for (int i = 0; i < tensors.size(); ++i) {
        if (!tensors[i].external)
            continue;
        external << i;
        if (largest < 0 || tensors[i].bytes > tensors[largest].bytes)
            largest = i;
    }
    if (largest < 0)
        return;
    window.placementState()->pinTo({largest}, {repack::Placement::Inline});
    external.removeAll(largest);
    window.placementState()->pinTo(external.mid(0, 2), {repack::Placement::External, "extra.data"});
}

QDockWidget* dockNamed(MainWindow& window, const QString& part)
{
    for (QDockWidget* dock : window.findChildren<QDockWidget*>()) {
        if (dock->objectName().contains(part, Qt::CaseInsensitive))
            return dock;
    }
    return nullptr;
}

int mainWindowShot(const ScreenshotRequest& request)
{
    MainWindow window;
    window.resize(request.size);
    window.show();
    const QString view = request.view;
    auto ready = [&window, view, out = request.out, height = request.size.height()] {
        if (view == QLatin1String("placement")) {
            if (QDockWidget* dock = dockNamed(window, QStringLiteral("placement"))) {
                dock->show();
                dock->raise();
            }
            pinForShow(window);
        }
        if (view != QLatin1String("before-after")) {
            selectLargestExternal(window);
            grabLater(&window, out);
            return;
        }
        // A repack that brings small tensors inline and shards the rest: every kind of change.
        window.repackPanel()->restoreSettings({
            {QStringLiteral("repack/keep"), false},
            {QStringLiteral("repack/threshold"), QVariant::fromValue<qulonglong>(2048)},
            {QStringLiteral("repack/shardSize"), QVariant::fromValue<qulonglong>(64 << 10)},
        });
        if (QDockWidget* dock = dockNamed(window, QStringLiteral("beforeAfter"))) {
            dock->show();
            dock->raise();
            window.resizeDocks({dock}, {height / 2}, Qt::Vertical);
        }
        selectLargestExternal(window);
        QTimer::singleShot(500, &window, [&window, out] {
            whenReady(
                &window,
                [&window] { return !window.isPlanning() && !window.beforeAfter()->isPending(); },
                [&window, out] { grabLater(&window, out); });
        });
    };
    if (request.models.isEmpty()) {
        ready();
    } else {
        QObject::connect(&window, &MainWindow::modelOpened, &window, ready);
        QObject::connect(
            &window, &MainWindow::openFailed, &window, [](const QString&, const QString& error) {
                complain(error);
                QApplication::exit(1);
            });
        window.openFile(request.models.constFirst(), true);
    }
    return QApplication::exec();
}

int compareShot(const ScreenshotRequest& request)
{
    if (request.models.size() < 2) {
        complain(QStringLiteral("--screenshot-view compare needs two models: A B"));
        return 2;
    }
    CompareWindow window;
    window.resize(request.size);
    window.show();
    QObject::connect(
        &window, &CompareWindow::finished, &window, [&window, out = request.out](bool ok) {
            if (!ok) {
                complain(window.lastError());
                QApplication::exit(1);
                return;
            }
            // Select the first changed tensor so the picture shows the shared selection.
            QTableView* table = window.table();
            if (table->model()->rowCount() > 0)
                table->selectionModel()->select(table->model()->index(0, 0),
                    QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            grabLater(&window, out);
        });
    window.compare(request.models[0], request.models[1]);
    return QApplication::exec();
}

int folderShot(const ScreenshotRequest& request)
{
    if (request.models.size() != 1 || !namesFolder(request.models.front())) {
        complain(QStringLiteral("--screenshot-view folder needs one folder of graphs"));
        return 2;
    }
    FolderWindow window;
    window.resize(request.size);
    window.show();
    QObject::connect(
        &window, &FolderWindow::inspected, &window, [&window, out = request.out](bool ok) {
            if (!ok) {
                complain(window.lastError());
                QApplication::exit(1);
                return;
            }
            // Once the savings of a shared data file are said.
            whenReady(
                &window, [&window] { return !window.savingsLabel()->text().isEmpty(); },
                [&window, out] { grabLater(&window, out); });
        });
    window.openFolder(request.models.front());
    return QApplication::exec();
}

} // namespace

QStringList screenshotViews()
{
    return {QStringLiteral("main"), QStringLiteral("placement"), QStringLiteral("before-after"),
        QStringLiteral("compare"), QStringLiteral("folder")};
}

int renderScreenshot(const ScreenshotRequest& request)
{
    if (!screenshotViews().contains(request.view)) {
        complain(QStringLiteral("unknown view %1 (try %2)")
                     .arg(request.view, screenshotViews().join(QStringLiteral(", "))));
        return 2;
    }
    if (request.view == QLatin1String("compare"))
        return compareShot(request);
    if (request.view == QLatin1String("folder"))
        return folderShot(request);
    return mainWindowShot(request);
}

} // namespace ui
