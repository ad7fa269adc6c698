// Beside a busy bar, what the remote command behind it waits for (ui/util/wait_relay.h):
// "Waiting for 127.0.0.1:8080: model.onnx, attempt 2 of 5 (HTTP 503), next in 4 s"; hidden while
// it waits for nothing. However long, it never widens its window: it is cut to the room it
// gets, and its tooltip has the whole text.
#pragma once

#include <QLabel>

namespace ui {

class WaitLabel : public QLabel {
    Q_OBJECT
public:
    explicit WaitLabel(QWidget* parent = nullptr);

    // Says that the command waits for `what`; "" hides the label.
    void setWaiting(const QString& what);
};

} // namespace ui
