// The background-job helper every long GUI job runs through (ui/util/job_tracker.h): a result comes
// back on the GUI thread, a superseded or reset job never delivers and its result is freed on a
// pool thread, waitForFinished waits for every job still running, and a tracker that is gone
// delivers nothing.
#include "ui/util/job_tracker.h"

#include <QCoreApplication>
#include <QSemaphore>
#include <QThread>
#include <QThreadPool>
#include <QtTest>

#include <atomic>
#include <memory>

namespace {

// A result whose last owner records the thread it was freed on.
std::shared_ptr<int> tracked(int value, std::shared_ptr<std::atomic<QThread*>> freedOn)
{
    return std::shared_ptr<int>(new int(value), [freedOn](int* p) {
        freedOn->store(QThread::currentThread());
        delete p;
    });
}

// Every pool job has ended (its result reported, so its delivery, if any, is posted), then
// every event posted before now is handled: a delivery that was coming has come. No waiting a
// fixed time that a slow machine could outlast.
void settle()
{
    QThreadPool::globalInstance()->waitForDone();
    bool flushed = false;
    QMetaObject::invokeMethod(
        QCoreApplication::instance(), [&flushed] { flushed = true; }, Qt::QueuedConnection);
    while (!flushed)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
}

} // namespace

class TestJobTracker : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void resultArrivesOnTheGuiThread()
    {
        ui::JobTracker jobs;
        std::atomic<QThread*> ranOn{nullptr};
        QThread* deliveredOn = nullptr;
        int delivered = 0;
        jobs.start(
            [&ranOn] {
                ranOn.store(QThread::currentThread());
                return 42;
            },
            [&](int value) {
                deliveredOn = QThread::currentThread();
                delivered = value;
            });
        QVERIFY(jobs.isRunning());
        QTRY_COMPARE(delivered, 42);
        QVERIFY(!jobs.isRunning());
        QVERIFY(ranOn.load() != nullptr);
        QVERIFY(ranOn.load() != QCoreApplication::instance()->thread());
        QCOMPARE(deliveredOn, QCoreApplication::instance()->thread());
    }

    void supersededResultIsDropped_data()
    {
        QTest::addColumn<bool>("olderEndsFirst");
        QTest::addRow("older job ends first") << true;
        QTest::addRow("older job ends last") << false;
    }

    // The older job is still running when a newer one starts: only the newer one's result is
    // delivered, whichever ends first, and the older one's is freed off the GUI thread.
    void supersededResultIsDropped()
    {
        QFETCH(bool, olderEndsFirst);
        ui::JobTracker jobs;
        auto gate = std::make_shared<QSemaphore>();
        auto freedOn = std::make_shared<std::atomic<QThread*>>(nullptr);
        QList<int> delivered;
        auto deliver = [&delivered](const std::shared_ptr<int>& value) { delivered << *value; };
        jobs.start(
            [gate, freedOn] {
                gate->acquire();
                return tracked(1, freedOn);
            },
            deliver);
        auto newerGate = std::make_shared<QSemaphore>();
        jobs.start(
            [newerGate] {
                newerGate->acquire();
                return std::make_shared<int>(2);
            },
            deliver);
        QVERIFY(jobs.isRunning());
        if (olderEndsFirst) {
            gate->release();
            QTRY_VERIFY(freedOn->load() != nullptr);
            QVERIFY(jobs.isRunning()); // the newer job still is
            newerGate->release();
        } else {
            newerGate->release();
            QTRY_COMPARE(delivered, QList<int>{2});
            gate->release();
            QTRY_VERIFY(freedOn->load() != nullptr);
        }
        QTRY_VERIFY(!jobs.isRunning());
        settle(); // a stray delivery would have come by now
        QCOMPARE(delivered, QList<int>{2});
        QVERIFY(freedOn->load() != QCoreApplication::instance()->thread());
    }

    void resetDropsTheRunningJob()
    {
        ui::JobTracker jobs;
        auto gate = std::make_shared<QSemaphore>();
        bool delivered = false;
        jobs.start(
            [gate] {
                gate->acquire();
                return 1;
            },
            [&delivered](int) { delivered = true; });
        jobs.reset();
        QVERIFY(!jobs.isRunning());
        gate->release();
        jobs.waitForFinished();
        settle();
        QVERIFY(!delivered);
    }

    // waitForFinished waits for superseded jobs too (they may read what the owner is about to
    // change), and returns at once when every result is already in.
    void waitForFinishedWaitsForEveryJob()
    {
        ui::JobTracker jobs;
        auto olderDone = std::make_shared<std::atomic<bool>>(false);
        jobs.start(
            [olderDone] {
                QThread::msleep(200);
                olderDone->store(true);
                return 1;
            },
            [](int) {});
        int delivered = 0;
        jobs.start([] { return 2; }, [&delivered](int value) { delivered = value; });
        jobs.waitForFinished();
        QVERIFY(olderDone->load());
        QTRY_COMPARE(delivered, 2);
        jobs.waitForFinished(); // a delivered job is no longer waited for
    }

    void destroyedTrackerDeliversNothing()
    {
        auto jobs = std::make_unique<ui::JobTracker>();
        auto gate = std::make_shared<QSemaphore>();
        auto finished = std::make_shared<std::atomic<bool>>(false);
        bool delivered = false;
        jobs->start(
            [gate, finished] {
                gate->acquire();
                finished->store(true);
                return 1;
            },
            [&delivered](int) { delivered = true; });
        jobs.reset();
        gate->release();
        QTRY_VERIFY(finished->load());
        settle();
        QVERIFY(!delivered);
    }
};

QTEST_GUILESS_MAIN(TestJobTracker)
#include "tst_job_tracker.moc"
