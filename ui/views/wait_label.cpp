#include "wait_label.h"

namespace ui {

WaitLabel::WaitLabel(QWidget* parent)
    : QLabel(parent)
{
    setObjectName(QStringLiteral("waitingFor"));
    // The text's width is no minimum of the window's (a long host and file name would widen it).
    setMinimumWidth(fontMetrics().averageCharWidth() * 8);
    hide();
}

void WaitLabel::setWaiting(const QString& what)
{
    setText(what.isEmpty() ? QString() : tr("Waiting for %1").arg(what));
    setToolTip(text());
    setVisible(!what.isEmpty());
}

} // namespace ui
