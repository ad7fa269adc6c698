// ui/save/model_owner.h: the window's model is read through read leases and written through the one
// write lease, never both at once, and a lease keeps its model alive.
#include "tests/support/save_fixtures.h"
#include "ui/save/model_owner.h"

#include "core/model/model.h"

#include <QElapsedTimer>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <thread>

class TestModelOwner : public QObject {
    Q_OBJECT

    std::shared_ptr<repack::Model> load(const QTemporaryDir& dir, const char* name)
    {
        const QString path = fixtures::writeUint8Model(dir.path(), name, {4096}, 0, "w.data");
        return std::shared_ptr<repack::Model>(fixtures::loadModel(path));
    }

private Q_SLOTS:
    void readersAndTheWriterExcludeEachOther()
    {
        QTemporaryDir dir;
        ui::ModelOwner owner;
        QVERIFY(!owner.read());
        QVERIFY(!owner.write()); // no model
        const auto model = load(dir, "m.onnx");
        QVERIFY(model);
        owner.reset(model);

        {
            ui::ModelOwner::ReadLease reading = owner.read();
            QCOMPARE(reading.get(), model.get());
            QCOMPARE(owner.readers(), 1L);
            QVERIFY(!owner.write()); // a job still reads it
        }
        QCOMPARE(owner.readers(), 0L);

        ui::ModelOwner::WriteLease writing = owner.write();
        QVERIFY(writing);
        QCOMPARE(writing.get(), model.get());
        QVERIFY(owner.isWriting());
        QVERIFY(!owner.read()); // the save's worker changes it
        QVERIFY(!owner.write()); // one writer
        {
            // The save's own plan reads through the write lease, which it keeps.
            auto planning = writing.shared();
            QCOMPARE(planning.get(), model.get());
            writing.release();
            QVERIFY(owner.isWriting());
        }
        QVERIFY(!owner.isWriting());
        QVERIFY(owner.read());
    }

    void aLeaseGivenBackOnAnotherThreadReleasesIt()
    {
        QTemporaryDir dir;
        ui::ModelOwner owner;
        owner.reset(load(dir, "m.onnx"));
        ui::ModelOwner::WriteLease writing = owner.write();
        std::thread worker([lease = std::move(writing)]() mutable { lease.release(); });
        worker.join();
        QVERIFY(!owner.isWriting());
        QVERIFY(owner.write());
    }

    // A finished job's copy of a read lease may be freed on its pool thread a moment after the
    // job reported finished, or a job may still read: asking for the write lease then returns
    // at once (the GUI thread never waits for a reader), lets no new reader in, and writable()
    // says when the last reader is gone; the lease is given then.
    void aWriterIsToldWhenTheLastReaderIsGoneInsteadOfWaiting()
    {
        QTemporaryDir dir;
        ui::ModelOwner owner;
        owner.reset(load(dir, "m.onnx"));
        std::atomic<bool> done{false};
        std::thread job([lease = owner.read(), &done]() mutable {
            while (!done.load()) // the job reads until told
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            lease.reset();
        });
        auto joined = qScopeGuard([&] {
            done.store(true);
            job.join();
        });
        QSignalSpy writable(&owner, &ui::ModelOwner::writable);
        QElapsedTimer clock;
        clock.start();
        QVERIFY(!owner.write()); // a job still reads it
        QVERIFY2(clock.elapsed() < 200, "write() waited for the reader");
        QVERIFY(owner.writerWaits());
        QVERIFY(owner.isWriting());
        QVERIFY(!owner.read()); // no new reader while the writer waits
        QCOMPARE(writable.count(), 0);
        done.store(true);
        QVERIFY(writable.wait(5000));
        ui::ModelOwner::WriteLease writing = owner.write();
        QVERIFY(writing);
        QVERIFY(!owner.writerWaits());
        writing.release();
        QVERIFY(!owner.isWriting());
        QCOMPARE(writable.count(), 1);
    }

    // A writer that gave up waiting lets readers in again, and is not told of the last one.
    void aWriterThatGivesUpLetsReadersInAgain()
    {
        QTemporaryDir dir;
        ui::ModelOwner owner;
        owner.reset(load(dir, "m.onnx"));
        QSignalSpy writable(&owner, &ui::ModelOwner::writable);
        ui::ModelOwner::ReadLease reading = owner.read();
        QVERIFY(!owner.write());
        QVERIFY(!owner.read());
        owner.withdraw();
        QVERIFY(!owner.isWriting());
        QCOMPARE(owner.read().get(), reading.get());
        reading.reset();
        QTest::qWait(50);
        QCOMPARE(writable.count(), 0);
    }

    void aLeaseKeepsItsModelAfterAnotherIsOpened()
    {
        QTemporaryDir dir;
        ui::ModelOwner owner;
        std::weak_ptr<repack::Model> first;
        ui::ModelOwner::ReadLease reading;
        {
            auto model = load(dir, "a.onnx");
            first = model;
            owner.reset(std::move(model));
            reading = owner.read();
        }
        auto before = owner.reset(load(dir, "b.onnx"));
        before.reset();
        QVERIFY(!first.expired()); // a job still reads it
        QCOMPARE(owner.readers(), 0L); // the new model's readers, not the old one's
        QVERIFY(owner.write());
        QCOMPARE(reading->tensors().size(), size_t(1));
        reading.reset();
        QVERIFY(first.expired());
    }
};

QTEST_GUILESS_MAIN(TestModelOwner)
#include "tst_model_owner.moc"
