// repack-bench-compare: the issue-8 target of the compare window (File > Compare with...) on two
// big models, medians of --runs fresh windows (1400x860):
//   shown    from constructing the window and calling compare(A, B) to the end of the first
//            paint of the diff table after the layout and the storage-only statuses are in
//            (both models loaded, diffed without reading bytes, drawn): target <= 1 s;
//   bytes    from the same start until the byte comparison has finished and the content-changed
//            rows are updated (this may take long; the window stays responsive meanwhile);
//   stall    the longest gap between ticks of a 10 ms GUI-thread timer over the whole run.
// Make the models with
//   repack-genmodel --out A/m.onnx --weights 256M --tensors 100000
//   onnx-repack repack A/m.onnx -o B/m.onnx --order size      (every tensor moved, same bytes)
//   QT_QPA_PLATFORM=offscreen repack-bench-compare A/m.onnx B/m.onnx [--runs N]
#include "ui/models/diff_table_model.h"
#include "ui/windows/compare_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTableView>
#include <QThreadPool>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

// Notes the end of the first paint of `target` after `armed` is set: the event-loop turn after
// that paint event, so the paint and the backing store flush are included.
class PaintProbe : public QObject {
public:
    explicit PaintProbe(QWidget* target)
        : m_target(target)
    {
        target->installEventFilter(this);
    }
    void arm(const QElapsedTimer& clock)
    {
        m_clock = &clock;
        m_armed = true;
    }
    qint64 at() const { return m_at; }

protected:
    bool eventFilter(QObject* object, QEvent* event) override
    {
        if (object == m_target && event->type() == QEvent::Paint && m_armed) {
            m_armed = false;
            QTimer::singleShot(0, this, [this] { m_at = m_clock->elapsed(); });
        }
        return false;
    }

private:
    QWidget* m_target;
    const QElapsedTimer* m_clock = nullptr;
    bool m_armed = false;
    qint64 m_at = -1;
};

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

} // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Time the compare window on two models."));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("A"), QStringLiteral("First model"));
    parser.addPositionalArgument(QStringLiteral("B"), QStringLiteral("Second model"));
    const QCommandLineOption runsOption(QStringLiteral("runs"), QStringLiteral("Runs (default 5)"),
        QStringLiteral("N"), QStringLiteral("5"));
    parser.addOption(runsOption);
    parser.process(app);
    if (parser.positionalArguments().size() != 2) {
        std::fprintf(stderr, "repack-bench-compare: give two models, A and B\n");
        return 2;
    }
    const QString a = parser.positionalArguments()[0];
    const QString b = parser.positionalArguments()[1];
    const int runs = std::max(1, parser.value(runsOption).toInt());

    // The app is running when a comparison opens: its fonts and styles are loaded. Pay that
    // once here (a first window of a process takes seconds to find its fonts).
    {
        ui::CompareWindow warmUp;
        warmUp.resize(1400, 860);
        warmUp.show();
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 300)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        std::printf("warm-up (first window of the process, not counted): %lld ms\n",
            static_cast<long long>(clock.elapsed()));
    }

    std::vector<double> shown, bytes, stalls;
    for (int run = 0; run < runs; ++run) {
        QElapsedTimer clock;
        clock.start();
        qint64 lastTick = 0;
        qint64 longest = 0;
        QTimer ticker;
        ticker.setTimerType(Qt::PreciseTimer);
        ticker.setInterval(10);
        QObject::connect(&ticker, &QTimer::timeout, [&] {
            const qint64 now = clock.elapsed();
            longest = std::max(longest, now - lastTick);
            lastTick = now;
        });
        ticker.start();

        auto* window = new ui::CompareWindow;
        window->resize(1400, 860);
        window->show();
        PaintProbe probe(window->table()->viewport());
        QObject::connect(window, &ui::CompareWindow::layoutReady, [&] { probe.arm(clock); });
        qint64 finishedAt = -1;
        bool ok = false;
        QEventLoop loop;
        QObject::connect(window, &ui::CompareWindow::finished, [&](bool success) {
            finishedAt = clock.elapsed();
            ok = success;
            QTimer::singleShot(200, &loop, &QEventLoop::quit);
        });
        window->compare(a, b);
        QTimer::singleShot(600000, &loop, &QEventLoop::quit);
        loop.exec();
        ticker.stop();
        if (!ok) {
            std::fprintf(stderr, "repack-bench-compare: %s\n", qPrintable(window->lastError()));
            return 1;
        }
        const auto* diff = window->diffModel()->diff();
        std::printf("run %d: %zu tensors, table shown %lld ms, bytes compared %lld ms, "
                    "longest GUI stall %lld ms (%zu content changed, %zu moved)\n",
            run + 1, diff->tensors.size(), static_cast<long long>(probe.at()),
            static_cast<long long>(finishedAt), static_cast<long long>(longest),
            diff->count(ui::ChangeKind::ContentChanged), diff->count(ui::ChangeKind::Moved));
        std::fflush(stdout);
        shown.push_back(double(probe.at()));
        bytes.push_back(double(finishedAt));
        stalls.push_back(double(longest));
        delete window;
        // Its models are freed on pool threads: let that finish before the next run starts.
        QThreadPool::globalInstance()->waitForDone();
        QCoreApplication::processEvents();
    }
    std::printf("median of %d: table shown %.0f ms (target 1000), bytes compared %.0f ms, "
                "longest GUI stall %.0f ms\n",
        runs, median(shown), median(bytes), median(stalls));
    if (runs > 2) {
        // The first run of a process also faults in the memory of two fresh models.
        shown.erase(shown.begin());
        std::printf("median of runs 2-%d: table shown %.0f ms\n", runs, median(shown));
    }
    return 0;
}
