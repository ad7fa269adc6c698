// What a remote command waits for, from its worker to the GUI thread (ui/util/wait_relay.h): a
// token's words arrive on the relay's thread, a burst of them as a few updates ending with the
// last, "" clears, a command let go (stopped, or superseded by the next) is heard no more, and a
// relay destroyed while a worker still speaks is never reached.
#include "ui/util/wait_relay.h"

#include "core/progress.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QThread>
#include <QtTest>

#include <atomic>
#include <string>
#include <thread>

namespace {

// `token` says `what` from a thread of its own, as a transport's worker does.
void sayFromWorker(const repack::CancelToken& token, const std::string& what)
{
    std::thread([&token, what] { token.waiting(what); }).join();
}

} // namespace

class TestWaitRelay : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aWaitIsSaidOnTheRelaysThreadAndClearedByAnEmptyOne()
    {
        repack::CancelToken token;
        ui::WaitRelay relay;
        QThread* saidOn = nullptr;
        connect(&relay, &ui::WaitRelay::changed, this,
            [&saidOn] { saidOn = QThread::currentThread(); });
        relay.watch(token);
        const QString what
            = QStringLiteral("127.0.0.1:8080: model.onnx, attempt 2 of 5 (HTTP 503), "
                             "next in 4 s");
        sayFromWorker(token, what.toStdString());
        QTRY_COMPARE(relay.text(), what);
        QCOMPARE(saidOn, QCoreApplication::instance()->thread());
        sayFromWorker(token, "");
        QTRY_COMPARE(relay.text(), QString());
    }

    // Thousands of words in a burst reach the GUI thread as a few updates a second, the last
    // one the worker's last words.
    void aBurstIsThrottledToItsLastWords()
    {
        repack::CancelToken token;
        ui::WaitRelay relay;
        QSignalSpy changed(&relay, &ui::WaitRelay::changed);
        relay.watch(token);
        QElapsedTimer clock;
        clock.start();
        std::atomic<bool> done{false};
        std::thread worker([&] {
            for (int i = 0; i < 20000; ++i)
                token.waiting("attempt " + std::to_string(i));
            token.waiting("the last");
            done = true;
        });
        while (!done)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
        worker.join();
        QTRY_COMPARE(relay.text(), QStringLiteral("the last"));
        const qint64 elapsed = clock.elapsed();
        QVERIFY2(changed.size() <= 2 + elapsed / ui::WaitRelay::kIntervalMs,
            qPrintable(QStringLiteral("%1 updates in %2 ms").arg(changed.size()).arg(elapsed)));
        QCOMPARE(changed.constLast().value(0).toString(), QStringLiteral("the last"));
    }

    void aCommandLetGoIsHeardNoMore_data()
    {
        QTest::addColumn<bool>("superseded");
        QTest::addRow("stopped") << false;
        QTest::addRow("superseded by the next") << true;
    }

    void aCommandLetGoIsHeardNoMore()
    {
        QFETCH(bool, superseded);
        repack::CancelToken first;
        repack::CancelToken next;
        ui::WaitRelay relay;
        relay.watch(first);
        sayFromWorker(first, "first host");
        QTRY_COMPARE(relay.text(), QStringLiteral("first host"));
        if (superseded)
            relay.watch(next);
        else
            relay.stop();
        QCOMPARE(relay.text(), QString()); // at once
        sayFromWorker(first, "first host again");
        QTest::qWait(2 * ui::WaitRelay::kIntervalMs);
        QCOMPARE(relay.text(), QString());
        if (superseded) {
            sayFromWorker(next, "next host");
            QTRY_COMPARE(relay.text(), QStringLiteral("next host"));
        }
    }

    // The window goes while its command's worker still speaks: nothing reaches the relay that
    // is gone (the sanitizer build would see it), and the worker is never held up.
    void aRelayGoneIsNeverReached()
    {
        repack::CancelToken token;
        std::atomic<bool> stop{false};
        std::thread worker([&] {
            for (int i = 0; !stop; ++i)
                token.waiting("attempt " + std::to_string(i));
        });
        for (int round = 0; round < 50; ++round) {
            auto* relay = new ui::WaitRelay;
            relay->watch(token);
            QCoreApplication::processEvents();
            delete relay;
            QCoreApplication::processEvents();
        }
        stop = true;
        worker.join();
    }
};

QTEST_GUILESS_MAIN(TestWaitRelay)
#include "tst_wait_relay.moc"
