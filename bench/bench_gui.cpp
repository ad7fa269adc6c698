// repack-bench-gui: the issue-4 targets of the desktop window on a big model (make it with
// `repack-genmodel --out M.onnx --weights 1G --tensors 100000`), medians of --runs runs:
//   open    from constructing the window and starting the load to the end of (a) the window's
//           first paint and (b) the first paint of the tensor table holding every row;
//   sort    sortByColumn(Size) (or --sort-column N), descending then ascending, each until the
//           table has repainted;
//   save    with --save: the longest gap between ticks of a 10 ms GUI-thread timer from saveTo()
//           (in place, the repack panel's default options) until the table has repainted the
//           saved model and 500 ms more, with the table sorted by size and the window repainted
//           every 100 ms meanwhile. Each run also prints the GUI thread's CPU time and the
//           machine's VM steal time within the longest gap, and every gap over 50 ms;
//   drop    with --drop N: N table rows spread over the model (every k-th row of the
//           table sorted by size) dragged as the table drags them (its model's mimeData) and
//           dropped on the Placement pane's Inline row, from delivering the drop event until
//           the window has repainted with the Planned column, the pinned outlines in the map
//           and the preview of the new plan (planSave); then the same for Undo.
// Every time is measured through the event loop, as the application runs:
//   QT_QPA_PLATFORM=offscreen repack-bench-gui MODEL [--runs N] [--save] [--sort-column N]
//                                                    [--drop N]
#include "ui/models/placement_model.h"
#include "ui/models/placement_state.h"
#include "ui/models/tensor_filter_proxy.h"
#include "ui/models/tensor_table_model.h"
#include "ui/save/save_job.h"
#include "ui/util/byte_format.h"
#include "ui/views/placement_view.h"
#include "ui/views/repack_panel.h"
#include "ui/windows/main_window.h"

#include <QApplication>
#include <QCheckBox>
#include <QCommandLineParser>
#include <QDropEvent>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QListView>
#include <QMimeData>
#include <QStandardPaths>
#include <QTableView>
#include <QTimer>
#include <QUndoStack>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <vector>

namespace {

constexpr int kTimeoutMs = 600000;

// Notes the end of the first paint, after `start()`, of `target` (or of any widget in the
// window `target`, with `wholeWindow`) that happens while `ready()` holds: the event-loop turn
// after that paint event, so the paint and the backing store flush are included.
class PaintProbe : public QObject {
public:
    PaintProbe(
        QWidget* target, bool wholeWindow, std::function<bool()> ready = [] { return true; })
        : m_target(target)
        , m_wholeWindow(wholeWindow)
        , m_ready(std::move(ready))
    {
        qApp->installEventFilter(this);
    }

    void start(const QElapsedTimer& clock)
    {
        m_clock = &clock;
        m_scheduled = false;
        m_at = -1;
    }
    qint64 at() const { return m_at; }

protected:
    bool eventFilter(QObject* object, QEvent* event) override
    {
        if (event->type() != QEvent::Paint || !m_clock || m_scheduled || !object->isWidgetType())
            return false;
        auto* widget = static_cast<QWidget*>(object);
        if ((m_wholeWindow ? widget->window() == m_target : widget == m_target) && m_ready()) {
            m_scheduled = true;
            QTimer::singleShot(0, this, [this] { m_at = m_clock->elapsed(); });
        }
        return false;
    }

private:
    QWidget* m_target;
    bool m_wholeWindow;
    std::function<bool()> m_ready;
    const QElapsedTimer* m_clock = nullptr;
    bool m_scheduled = false;
    qint64 m_at = -1;
};

// Runs the event loop until `done()` (checked after every batch of events) or the timeout.
// Sleeps while there is nothing to do, so the benchmark itself takes no CPU from the app.
bool spinUntil(const std::function<bool()>& done, int timeoutMs = kTimeoutMs)
{
    QElapsedTimer clock;
    clock.start();
    QTimer wake; // bounds each wait, so the timeout is noticed
    wake.start(50);
    while (!done()) {
        if (clock.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    }
    return true;
}

// CPU time of the calling thread: a long gap with little CPU was waiting (for a lock, the disk,
// or a core on a busy machine), not work the GUI thread did.
double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// CPU time the hypervisor gave to others (steal, all CPUs, 10 ms ticks), from /proc/stat: in a
// virtual machine a gap with no thread CPU may be the whole machine standing still.
double stealMs()
{
    QFile stat(QStringLiteral("/proc/stat"));
    if (!stat.open(QIODevice::ReadOnly))
        return 0;
    const QList<QByteArray> fields = stat.readLine().simplified().split(' ');
    return fields.size() > 8 ? fields[8].toDouble() * 10
                             : 0; // "cpu user nice system idle iowait irq softirq steal"
}

double median(std::vector<double> values)
{
    if (values.empty())
        return -1;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

struct Run {
    double windowPainted = -1, tablePainted = -1, sortDesc = -1, sortAsc = -1;
    double saveGap = -1, gapAt = -1, gapCpu = -1, gapSteal = -1, saveMs = -1, finishedAt = -1;
    double dropMs = -1, undoMs = -1; // --drop: until the window repainted the new pins
    QStringList longGaps; // every gap over 50 ms: "length@end (cpu, steal)"
    uint64_t bytesWritten = 0;
    bool saved = false;
};

// Drops `rows` rows of the table (every k-th, as sorted) on the Placement pane's Inline row and
// times until the window has repainted; then Undo, timed the same way.
bool measureDrop(ui::MainWindow& window, int rows, Run& run)
{
    QTableView* table = window.tensorView();
    const int total = table->model()->rowCount();
    if (rows > total)
        rows = total;
    const int step = std::max(1, total / rows);
    QItemSelection selection;
    for (int r = 0, picked = 0; r < total && picked < rows; r += step, ++picked)
        selection.select(table->model()->index(r, 0), table->model()->index(r, 0));
    table->selectionModel()->select(
        selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    spinUntil([] { return true; });
    std::unique_ptr<QMimeData> mime(
        table->model()->mimeData(table->selectionModel()->selectedIndexes()));
    QListView* list = window.placementView()->list();
    const QPoint at = list->visualRect(list->model()->index(0, 0)).center();
    ui::PlacementState* state = window.placementState();

    QElapsedTimer clock;
    PaintProbe painted(&window, true);
    clock.start();
    painted.start(clock);
    QDragEnterEvent enter(at, Qt::CopyAction, mime.get(), Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(list->viewport(), &enter);
    QDragMoveEvent move(at, Qt::CopyAction, mime.get(), Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(list->viewport(), &move);
    QDropEvent drop(QPointF(at), Qt::CopyAction, mime.get(), Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(list->viewport(), &drop);
    spinUntil([&] { return painted.at() >= 0; });
    run.dropMs = double(painted.at());
    if (state->pinnedCount() != rows) {
        std::fprintf(stderr, "repack-bench-gui: the drop pinned %d of %d tensors: %s\n",
            state->pinnedCount(), rows, qPrintable(state->lastRefusal()));
        return false;
    }

    PaintProbe undone(&window, true);
    clock.restart();
    undone.start(clock);
    state->undoStack()->undo();
    spinUntil([&] { return undone.at() >= 0; });
    run.undoMs = double(undone.at());
    return state->pinnedCount() == 0;
}

bool measure(const QString& model, bool save, int sortColumn, int dropRows, Run& run)
{
    QElapsedTimer clock;
    clock.start();
    auto window = std::make_unique<ui::MainWindow>();
    window->resize(1400, 860);
    QTableView* table = window->tensorView();
    PaintProbe windowPaint(window.get(), true);
    int expectedRows = -1;
    PaintProbe tablePaint(table->viewport(), false, [&] {
        return table->model()->rowCount() > 0 && table->model()->rowCount() == expectedRows;
    });
    windowPaint.start(clock);
    tablePaint.start(clock);
    QObject::connect(window.get(), &ui::MainWindow::modelOpened, window.get(),
        [&] { expectedRows = window->tensorModel()->rowCount(); });
    window->show();
    window->openFile(model, true);
    if (!spinUntil([&] { return tablePaint.at() >= 0 || !window->lastError().isEmpty(); })
        || !window->lastError().isEmpty()) {
        std::fprintf(stderr, "repack-bench-gui: cannot open %s: %s\n", qPrintable(model),
            qPrintable(window->lastError()));
        return false;
    }
    run.windowPainted = double(windowPaint.at());
    run.tablePainted = double(tablePaint.at());

    // Sorting: the proxy sorts all rows synchronously, then the table repaints.
    for (const Qt::SortOrder order : {Qt::DescendingOrder, Qt::AscendingOrder}) {
        PaintProbe sorted(table->viewport(), false);
        clock.restart();
        sorted.start(clock);
        table->sortByColumn(sortColumn, order);
        spinUntil([&] { return sorted.at() >= 0; });
        (order == Qt::DescendingOrder ? run.sortDesc : run.sortAsc) = double(sorted.at());
    }
    table->sortByColumn(ui::TensorTableModel::Size, Qt::DescendingOrder);
    spinUntil([] { return true; });
    if (dropRows > 0 && !measureDrop(*window, dropRows, run))
        return false;
    if (!save)
        return true;

    // A 10 ms timer on the GUI thread: a gap between its ticks much longer than that is time
    // the event loop did not run.
    QElapsedTimer tick;
    double longest = 0, longestAt = 0, longestCpu = 0, longestSteal = 0, lastCpu = threadCpuMs(),
           lastSteal = stealMs();
    QTimer ticker;
    ticker.setTimerType(Qt::PreciseTimer);
    ticker.setInterval(10);
    QObject::connect(&ticker, &QTimer::timeout, [&] {
        const double gap = double(tick.nsecsElapsed()) / 1e6;
        tick.restart();
        const double cpu = threadCpuMs();
        const double steal = stealMs();
        if (gap > 50)
            run.longGaps << QStringLiteral("%1@%2 (cpu %3, steal %4)")
                                .arg(gap, 0, 'f', 0)
                                .arg(clock.elapsed())
                                .arg(cpu - lastCpu, 0, 'f', 0)
                                .arg(steal - lastSteal, 0, 'f', 0);
        if (gap > longest) {
            longest = gap;
            longestAt = double(clock.elapsed());
            longestCpu = cpu - lastCpu;
            longestSteal = steal - lastSteal;
        }
        lastCpu = cpu;
        lastSteal = steal;
    });
    // Keep the GUI busy the way a user would: repaint while saving.
    QTimer repaint;
    QObject::connect(&repaint, &QTimer::timeout, window.get(), [&] { window->update(); });
    bool finished = false;
    QObject::connect(window->saveJob(), &ui::SaveJob::finished, window.get(),
        [&](const ui::SaveOutcome& outcome) { run.bytesWritten = outcome.report.bytesWritten; });
    PaintProbe refreshed(table->viewport(), false, [&] { return finished; });
    QObject::connect(window.get(), &ui::MainWindow::saveFinished, window.get(), [&](bool ok) {
        finished = true;
        run.saved = ok;
        run.finishedAt = double(clock.elapsed());
    });
    // The threshold rule, as the bench always measured: a model opens keeping its layout, and
    // saving that over itself would write nothing.
    window->repackPanel()->keepBox()->setChecked(false);
    clock.restart();
    refreshed.start(clock);
    tick.start();
    lastCpu = threadCpuMs();
    lastSteal = stealMs();
    ticker.start();
    repaint.start(100);
    if (!window->saveTo(model)) {
        std::fprintf(stderr, "repack-bench-gui: the save did not start\n");
        return false;
    }
    spinUntil([&] { return refreshed.at() >= 0; });
    run.saveMs = double(refreshed.at());
    const qint64 tailFrom = clock.elapsed();
    spinUntil([&] { return clock.elapsed() - tailFrom >= 500; });
    run.saveGap = longest;
    run.gapAt = longestAt;
    run.gapCpu = longestCpu;
    run.gapSteal = longestSteal;
    return run.saved;
}

} // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("onnx-repack-bench"));
    QStandardPaths::setTestModeEnabled(true); // leave the user's settings alone
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Time opening, sorting and saving in the window."));
    parser.addHelpOption();
    const QCommandLineOption runsOption(QStringLiteral("runs"),
        QStringLiteral("Runs (median reported)."), QStringLiteral("N"), QStringLiteral("3"));
    const QCommandLineOption saveOption(QStringLiteral("save"),
        QStringLiteral("Also save MODEL in place and time the GUI thread's longest stall."));
    const QCommandLineOption sortOption(QStringLiteral("sort-column"),
        QStringLiteral("Column to time sorting by (default 5, Size)."), QStringLiteral("N"),
        QString::number(ui::TensorTableModel::Size));
    const QCommandLineOption dropOption(QStringLiteral("drop"),
        QStringLiteral("Also time dropping N selected rows on the Placement pane (and Undo)."),
        QStringLiteral("N"), QStringLiteral("0"));
    parser.addOptions({runsOption, saveOption, sortOption, dropOption});
    parser.addPositionalArgument(QStringLiteral("MODEL"), QStringLiteral("The .onnx file."));
    parser.process(app);
    const int runs = parser.value(runsOption).toInt();
    const int sortColumn = parser.value(sortOption).toInt();
    const int dropRows = parser.value(dropOption).toInt();
    if (parser.positionalArguments().size() != 1 || runs < 1 || sortColumn < 0 || dropRows < 0
        || sortColumn >= ui::TensorTableModel::ColumnCount)
        parser.showHelp(2);
    const QString model = parser.positionalArguments().constFirst();
    const bool save = parser.isSet(saveOption);

    std::vector<Run> all;
    for (int i = 0; i < runs; ++i) {
        Run run;
        if (!measure(model, save, sortColumn, dropRows, run))
            return 1;
        std::printf(
            "run %d: window painted %.0f ms, table painted %.0f ms, sort desc %.0f ms, asc %.0f ms",
            i + 1, run.windowPainted, run.tablePainted, run.sortDesc, run.sortAsc);
        if (dropRows)
            std::printf(
                ", drop of %d rows %.0f ms, undo %.0f ms", dropRows, run.dropMs, run.undoMs);
        if (save)
            std::printf(
                ", save + refresh %.0f ms (%s written), longest GUI gap %.1f ms ending at %.0f ms "
                "(GUI thread CPU in it %.0f ms, VM steal %.0f ms; save finished at %.0f ms); gaps "
                "> 50 ms: %s",
                run.saveMs, qPrintable(ui::formatBytes(run.bytesWritten)), run.saveGap, run.gapAt,
                run.gapCpu, run.gapSteal, run.finishedAt,
                run.longGaps.isEmpty() ? "none"
                                       : qPrintable(run.longGaps.join(QStringLiteral(", "))));
        std::printf("\n");
        std::fflush(stdout);
        all.push_back(run);
    }
    auto med = [&](double Run::*field) {
        std::vector<double> values;
        for (const Run& run : all)
            values.push_back(run.*field);
        return median(values);
    };
    std::printf("median of %d: window painted %.0f ms, table painted %.0f ms, sort desc %.0f ms, "
                "asc %.0f ms",
        runs, med(&Run::windowPainted), med(&Run::tablePainted), med(&Run::sortDesc),
        med(&Run::sortAsc));
    if (dropRows)
        std::printf(", drop of %d rows %.0f ms, undo %.0f ms", dropRows, med(&Run::dropMs),
            med(&Run::undoMs));
    if (save)
        std::printf(", longest GUI gap during save %.1f ms (max %.1f)", med(&Run::saveGap),
            std::max_element(all.begin(), all.end(), [](const Run& a, const Run& b) {
                return a.saveGap < b.saveGap;
            })->saveGap);
    std::printf("\n");
    return 0;
}
