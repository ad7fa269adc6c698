// A one-line label whose text never widens its window: cut at its end ("…") to the room the
// layout gives it, the whole text in its tooltip (before the tooltip set on it, if any).
// text() is the whole text.
#pragma once

#include <QLabel>

namespace ui {

class ElidedLabel : public QLabel {
    Q_OBJECT
public:
    explicit ElidedLabel(QWidget* parent = nullptr);

    QSize minimumSizeHint() const override;
    // Whether the text shown is cut (the tooltip then has it whole).
    bool isElided() const;
    // What hovering shows: the whole text when it is cut, and the tooltip set on the label.
    QString shownToolTip() const;

protected:
    bool event(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
};

} // namespace ui
