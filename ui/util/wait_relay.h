// What a remote command waits for, from its worker to the GUI thread. The transport tells the
// command's repack::CancelToken, on the worker, what a request waits for ("host:port:
// model.onnx, attempt 2 of 5 (HTTP 503), next in 4 s"), and "" once it waits no more; a relay
// watching that token says it as changed() on the relay's thread: the latest text, at most once
// every kIntervalMs however often the worker speaks, and only while that command is the one
// watched. The worker never waits for the GUI: it posts at most one delivery at a time, and a
// relay that is gone (its window closed) is told nothing more.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>

namespace repack {
class CancelToken;
}

namespace ui {

class WaitRelay : public QObject {
    Q_OBJECT
public:
    static constexpr int kIntervalMs = 250;

    explicit WaitRelay(QObject* parent = nullptr);
    ~WaitRelay() override;

    // From now on what `token` (a command's, before it starts) waits for is said here; the
    // command watched before is let go, its text with it.
    void watch(repack::CancelToken& token);
    // The command watched is over: it is let go, and its text said gone ("").
    void stop();
    // What the command watched waits for, as last said; "" for nothing.
    QString text() const { return m_text; }

    // For tests: `observer` hears every token a relay watches from now on (empty: none).
    static void setWatchObserver(std::function<void(const repack::CancelToken&)> observer);

Q_SIGNALS:
    void changed(const QString& text);

private:
    struct Channel;
    // Lets the command watched go: its worker's words reach this relay no more.
    void letGo();
    void deliver(const std::shared_ptr<Channel>& channel);
    void say(const QString& text);

    std::shared_ptr<Channel> m_channel; // of the command watched
    QString m_text;
    QElapsedTimer m_lastSaid;
};

} // namespace ui
