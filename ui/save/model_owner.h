// The window's model and the one place that says who may use it, as the Python package's
// ModelUse does for its models: jobs that read it (the preview, the pins' check, Export Plan)
// take a read lease, a save takes the write lease (the window's own save, or a save of its
// folder by the folder window: ui/save/model_holder.h). While the write lease is out no read lease
// is given (the save's worker changes the model), and the write lease is only given when no
// read lease is out. Nothing here waits: a writer that finds readers is told when the last one
// is gone (writable()) and asks again, and meanwhile no new reader gets in. Leases own the
// model, shared: a job keeps what it reads alive even after the window opened another model.
#pragma once

#include <QObject>

#include <atomic>
#include <memory>
#include <mutex>

namespace repack {
class Model;
}

namespace ui {

class ModelOwner : public QObject {
    Q_OBJECT
public:
    // Read access for a job: the model, shared; null when there is none or a save writes it.
    using ReadLease = std::shared_ptr<const repack::Model>;

    // Write access for a save's worker, given back when the last copy is destroyed (a job that
    // hands it back to the GUI thread in its result releases it there, at a known moment).
    class WriteLease {
    public:
        WriteLease() = default;
        repack::Model* get() const { return m_held ? m_held->model.get() : nullptr; }
        repack::Model& operator*() const { return *get(); }
        repack::Model* operator->() const { return get(); }
        explicit operator bool() const { return m_held != nullptr; }
        void release() { m_held.reset(); }
        // The model to read while holding this lease (the pointer keeps the lease): for a
        // plan the save's own worker makes (ui/save/save_planning.h).
        std::shared_ptr<const repack::Model> shared() const
        {
            return m_held ? std::shared_ptr<const repack::Model>(m_held, m_held->model.get())
                          : nullptr;
        }

    private:
        friend class ModelOwner;
        struct Held {
            Held(std::shared_ptr<repack::Model> m, std::shared_ptr<std::atomic<bool>> w)
                : model(std::move(m))
                , writing(std::move(w))
            {
            }
            ~Held() { writing->store(false); }
            Held(const Held&) = delete;
            Held& operator=(const Held&) = delete;
            std::shared_ptr<repack::Model> model;
            std::shared_ptr<std::atomic<bool>> writing;
        };
        std::shared_ptr<Held> m_held;
    };

    explicit ModelOwner(QObject* parent = nullptr);
    ~ModelOwner() override;

    // The window's model from now on (null: none); leases of the one before keep it alive.
    // Not while isWriting(). Returns the one before, for the caller to free off the GUI thread.
    std::shared_ptr<repack::Model> reset(std::shared_ptr<repack::Model> model);
    bool hasModel() const { return m_model != nullptr; }
    // The write lease is out, or a writer waits for the last reader (no read lease is given).
    bool isWriting() const;
    // A writer that asked while read leases were out waits for writable().
    bool writerWaits() const { return m_writerWaits; }
    // How many read leases of the current model are out.
    long readers() const;

    ReadLease read() const;
    // The write lease, at once or null; never waits. Null when there is no model or the write
    // lease is out, and while read leases are still out (a save must never change what a job
    // still reads): then the lease is kept for the writer that asked (writerWaits(), no new
    // read lease), writable() says when the last reader gave its lease back, and write() then
    // gives it. One writer asks at a time: a caller checks isWriting() before asking anew.
    WriteLease write();
    // The waiting writer gives up (it has nothing to write now): read leases are given again.
    void withdraw();

Q_SIGNALS:
    // The last read lease was given back while a writer waited (queued to the owner's thread):
    // write() gives the lease now.
    void writable();

private:
    // Called on the owner's thread once the last read lease of a model is gone.
    void readersGone();

    std::shared_ptr<repack::Model> m_model;
    // The read leases out now share one control block, whose deleter (run where the last of
    // them is dropped, a pool thread as often as not) tells this owner; a lease of an older
    // model counts for that one.
    mutable std::weak_ptr<const repack::Model> m_reading;
    std::shared_ptr<std::atomic<bool>> m_writing;
    bool m_writerWaits = false;
    // Shared with the leases' deleters, which may outlive this owner.
    struct Notifier {
        std::mutex mutex;
        ModelOwner* owner = nullptr;
    };
    std::shared_ptr<Notifier> m_notifier;
};

} // namespace ui
