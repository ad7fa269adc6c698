#include "wait_relay.h"

#include "core/progress.h"

#include <QMetaObject>
#include <QTimer>

#include <mutex>
#include <string>
#include <utility>

namespace ui {

// What a command's worker and the relay watching it share.
struct WaitRelay::Channel {
    std::mutex mutex;
    WaitRelay* relay = nullptr; // null once the relay let the command go
    std::string latest; // what the worker said last
    bool posted = false; // a delivery to the relay is on its way
};

namespace {

std::function<void(const repack::CancelToken&)>& watchObserver()
{
    static std::function<void(const repack::CancelToken&)> observer;
    return observer;
}

} // namespace

WaitRelay::WaitRelay(QObject* parent)
    : QObject(parent)
{
}

WaitRelay::~WaitRelay()
{
    letGo();
}

void WaitRelay::setWatchObserver(std::function<void(const repack::CancelToken&)> observer)
{
    watchObserver() = std::move(observer);
}

void WaitRelay::watch(repack::CancelToken& token)
{
    stop();
    auto channel = std::make_shared<Channel>();
    channel->relay = this;
    m_channel = channel;
    token.setWaitObserver([channel](const std::string& what) {
        std::lock_guard lock(channel->mutex);
        channel->latest = what;
        if (!channel->relay || channel->posted)
            return;
        channel->posted = true;
        // Posted while the lock is held: the relay, whose letGo() takes it, is still alive, and
        // an event left for it when it goes is dropped with it (~QObject).
        QMetaObject::invokeMethod(
            channel->relay, [relay = channel->relay, channel] { relay->deliver(channel); },
            Qt::QueuedConnection);
    });
    if (watchObserver())
        watchObserver()(token);
}

void WaitRelay::stop()
{
    letGo();
    say({});
}

void WaitRelay::letGo()
{
    // Kept here until unlocked: the worker's token may hold the channel no more.
    const std::shared_ptr<Channel> channel = std::exchange(m_channel, nullptr);
    if (!channel)
        return;
    std::lock_guard lock(channel->mutex);
    channel->relay = nullptr;
}

void WaitRelay::deliver(const std::shared_ptr<Channel>& channel)
{
    if (channel != m_channel)
        return; // of a command let go
    const qint64 early = m_lastSaid.isValid() ? kIntervalMs - m_lastSaid.elapsed() : 0;
    if (early > 0) {
        // Said a moment ago: the latest words, once the interval is over (the worker posts
        // nothing more meanwhile).
        QTimer::singleShot(int(early), this, [this, channel] { deliver(channel); });
        return;
    }
    QString text;
    {
        std::lock_guard lock(channel->mutex);
        text = QString::fromStdString(channel->latest);
        channel->posted = false;
    }
    m_lastSaid.start();
    say(text);
}

void WaitRelay::say(const QString& text)
{
    if (text == m_text)
        return;
    m_text = text;
    Q_EMIT changed(text);
}

} // namespace ui
