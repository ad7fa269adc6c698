// The window's model and the one place that says who may use it, as the Python package's
// ModelUse does for its models: jobs that read it (the preview, the pins' check, Export Plan)
// take a read lease, a save takes the write lease. While the write lease is out no read lease
// is given (the save's worker changes the model), and the write lease is only given when no
// read lease is out (the caller waits for its readers first). Leases own the model, shared: a
// job keeps what it reads alive even after the window opened another model.
#pragma once

#include <atomic>
#include <memory>

namespace repack {
class Model;
}

namespace ui {

class ModelOwner {
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
        // plan the save's own worker makes (ui/save_planning.h).
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

    ModelOwner();

    // The window's model from now on (null: none); leases of the one before keep it alive.
    // Not while the write lease is out. Returns the one before, for the caller to free off
    // the GUI thread.
    std::shared_ptr<repack::Model> reset(std::shared_ptr<repack::Model> model);
    bool hasModel() const { return m_model != nullptr; }
    bool isWriting() const;
    // How many read leases of the current model are out.
    long readers() const;

    ReadLease read() const;
    // Null when there is no model, the write lease is out, or a read lease still is a moment
    // (at most a second) after the call (wait for those readers first: a save must never
    // change what a job still reads).
    WriteLease write();

private:
    std::shared_ptr<repack::Model> m_model;
    // The readers' count travels with the model: a lease of an older model counts for that one.
    std::shared_ptr<const repack::Model> m_readerCount;
    std::shared_ptr<std::atomic<bool>> m_writing;
};

} // namespace ui
