#include "model_owner.h"

#include "core/model/model.h"

#include <cassert>
#include <chrono>
#include <thread>
#include <utility>

namespace ui {
namespace {

constexpr std::chrono::seconds kLingeringReaders{1};

} // namespace

ModelOwner::ModelOwner()
    : m_writing(std::make_shared<std::atomic<bool>>(false))
{
}

std::shared_ptr<repack::Model> ModelOwner::reset(std::shared_ptr<repack::Model> model)
{
    assert(!isWriting());
    m_readerCount.reset();
    std::shared_ptr<repack::Model> before = std::exchange(m_model, std::move(model));
    // A control block of its own, so its count is the readers' (and this one); its deleter
    // keeps the model alive for as long as a lease does.
    m_readerCount = m_model
        ? std::shared_ptr<const repack::Model>(m_model.get(), [keep = m_model](auto*) {})
        : nullptr;
    return before;
}

bool ModelOwner::isWriting() const
{
    return m_writing->load();
}

long ModelOwner::readers() const
{
    return m_readerCount ? m_readerCount.use_count() - 1 : 0;
}

ModelOwner::ReadLease ModelOwner::read() const
{
    if (isWriting())
        return nullptr;
    return m_readerCount;
}

ModelOwner::WriteLease ModelOwner::write()
{
    WriteLease lease;
    if (!m_model || isWriting())
        return lease;
    // The caller waited for the jobs that read the model, but a pool thread may still be
    // destroying a finished job, and with it that job's copy of a lease (QtConcurrent frees
    // the job after reporting it finished): a moment for those, never a save under a reader.
    const auto deadline = std::chrono::steady_clock::now() + kLingeringReaders;
    while (readers() > 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (readers() > 0)
        return lease;
    m_writing->store(true);
    lease.m_held = std::make_shared<WriteLease::Held>(m_model, m_writing);
    return lease;
}

} // namespace ui
