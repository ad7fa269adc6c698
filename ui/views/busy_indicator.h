// The status bar's activity corner: what the window is busy with, what its remote work waits for
// (ui/views/wait_label.h), a bar that stays indefinite until a save reports its first bytes, and
// a Cancel button for saves. Hidden when idle.
#pragma once

#include <QObject>

class QLabel;
class QProgressBar;
class QPushButton;
class QStatusBar;

namespace ui {

class WaitLabel;

class BusyIndicator : public QObject {
    Q_OBJECT
public:
    // Adds its widgets to `bar`, which owns it.
    explicit BusyIndicator(QStatusBar* bar);

    // Shows `what` (nothing: idle) with an indefinite bar; Cancel only when `cancellable`.
    void show(const QString& what, bool cancellable);
    void setText(const QString& text);
    void setProgress(quint64 done, quint64 total);
    // What the work shown waits for on the network ("" for nothing).
    void setWaiting(const QString& what);

Q_SIGNALS:
    void cancelClicked();

private:
    QLabel* m_label;
    WaitLabel* m_waiting;
    QProgressBar* m_bar;
    QPushButton* m_cancel;
};

} // namespace ui
