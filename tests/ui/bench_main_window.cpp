// Manual benchmark of the window on a big model (not a CTest suite; make the model with
// bench's repack-genmodel, e.g. `--weights 1G --tensors 100000`):
//   QT_QPA_PLATFORM=offscreen repack-bench-gui MODEL [SAVE_TO]
// Prints open + first paint time, sort-by-size time, and, when SAVE_TO is given, the longest
// time the GUI thread went without running its event loop during the background save.
#include "ui/main_window.h"
#include "ui/tensor_filter_proxy.h"
#include "ui/tensor_table_model.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTableView>
#include <QTimer>

#include <algorithm>
#include <cstdio>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    const QStringList args = QApplication::arguments();
    if (args.size() < 2) {
        std::fprintf(stderr, "usage: repack-bench-gui MODEL [SAVE_TO]\n");
        return 2;
    }
    ui::MainWindow window;
    window.resize(1400, 860);
    QElapsedTimer clock;
    clock.start();
    if (!window.openFile(args[1], true)) {
        std::fprintf(stderr, "%s\n", qPrintable(window.lastError()));
        return 1;
    }
    window.show();
    (void)window.grab(); // forces layout and a full paint of every visible view
    std::printf("tensors: %d\nopen + first paint: %lld ms\n", window.tensorModel()->rowCount(),
                clock.elapsed());

    clock.restart();
    window.tensorView()->sortByColumn(ui::TensorTableModel::Size, Qt::DescendingOrder);
    (void)window.tensorView()->grab();
    std::printf("sort by size + repaint: %lld ms\n", clock.elapsed());
    window.tensorView()->sortByColumn(-1, Qt::AscendingOrder);

    if (args.size() < 3)
        return 0;
    // A 10 ms timer: any gap much longer than that is time the GUI thread was blocked.
    QElapsedTimer tick;
    qint64 longest = 0;
    QTimer ticker;
    ticker.setInterval(10);
    QObject::connect(&ticker, &QTimer::timeout, [&] {
        longest = std::max(longest, tick.restart());
    });
    QSignalSpy finished(&window, &ui::MainWindow::saveFinished);
    clock.restart();
    tick.start();
    ticker.start();
    if (!window.saveTo(args[2]))
        return 1;
    // Keep the GUI busy the way a user would: repaint while saving.
    QTimer repaint;
    QObject::connect(&repaint, &QTimer::timeout, [&] { window.update(); });
    repaint.start(100);
    finished.wait(600000);
    const qint64 longestAfterStart = std::max(longest, tick.elapsed());
    std::printf("save: %s in %lld ms (including rebuilding the views); longest GUI-thread gap: %lld ms\n",
                finished.value(0).value(0).toBool() ? "ok" : "FAILED", clock.elapsed(), longestAfterStart);
    return 0;
}
