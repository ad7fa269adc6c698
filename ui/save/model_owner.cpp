#include "model_owner.h"

#include "core/model/model.h"

#include <cassert>
#include <utility>

namespace ui {

ModelOwner::ModelOwner(QObject* parent)
    : QObject(parent)
    , m_writing(std::make_shared<std::atomic<bool>>(false))
    , m_notifier(std::make_shared<Notifier>())
{
    m_notifier->owner = this;
}

ModelOwner::~ModelOwner()
{
    // A lease dropped from now on tells no one; a call already queued goes with this object.
    std::lock_guard lock(m_notifier->mutex);
    m_notifier->owner = nullptr;
}

std::shared_ptr<repack::Model> ModelOwner::reset(std::shared_ptr<repack::Model> model)
{
    assert(!isWriting());
    m_reading.reset();
    return std::exchange(m_model, std::move(model));
}

bool ModelOwner::isWriting() const
{
    return m_writerWaits || m_writing->load();
}

long ModelOwner::readers() const
{
    return m_reading.use_count();
}

ModelOwner::ReadLease ModelOwner::read() const
{
    if (!m_model || isWriting())
        return nullptr;
    if (ReadLease out = m_reading.lock())
        return out;
    // The first reader: a control block of its own, whose deleter keeps the model alive for as
    // long as a lease does and, once the last one is gone, queues readersGone() to the owner's
    // thread (the mutex keeps the owner alive while the call is queued).
    ReadLease lease(m_model.get(), [keep = m_model, notifier = m_notifier](auto*) {
        std::lock_guard lock(notifier->mutex);
        if (ModelOwner* owner = notifier->owner)
            QMetaObject::invokeMethod(
                owner, [owner] { owner->readersGone(); }, Qt::QueuedConnection);
    });
    m_reading = lease;
    return lease;
}

ModelOwner::WriteLease ModelOwner::write()
{
    WriteLease lease;
    if (!m_model || m_writing->load())
        return lease;
    // A finished job's copy of a read lease may still be freed on its pool thread (QtConcurrent
    // frees the job after reporting it finished): the writer is told when it is gone.
    if (!m_reading.expired()) {
        m_writerWaits = true;
        return lease;
    }
    m_writerWaits = false;
    m_writing->store(true);
    lease.m_held = std::make_shared<WriteLease::Held>(m_model, m_writing);
    return lease;
}

void ModelOwner::withdraw()
{
    m_writerWaits = false;
}

void ModelOwner::readersGone()
{
    // An older model's last reader, or one that went after the writer gave up: nothing waits.
    if (m_writerWaits && m_reading.expired())
        Q_EMIT writable();
}

} // namespace ui
