#include "busy_indicator.h"

#include "ui/util/byte_format.h"
#include "wait_label.h"

#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>

namespace ui {

BusyIndicator::BusyIndicator(QStatusBar* bar)
    : QObject(bar)
    , m_label(new QLabel(bar))
    , m_waiting(new WaitLabel(bar))
    , m_bar(new QProgressBar(bar))
    , m_cancel(new QPushButton(tr("Cancel"), bar))
{
    m_bar->setMaximumWidth(220);
    m_bar->setTextVisible(true);
    connect(m_cancel, &QPushButton::clicked, this, &BusyIndicator::cancelClicked);
    bar->addPermanentWidget(m_label);
    bar->addPermanentWidget(m_waiting);
    bar->addPermanentWidget(m_bar);
    bar->addPermanentWidget(m_cancel);
}

void BusyIndicator::show(const QString& what, bool cancellable)
{
    m_label->setText(what);
    m_label->setVisible(!what.isEmpty());
    m_bar->setVisible(!what.isEmpty());
    m_bar->setRange(0, 0);
    m_cancel->setVisible(cancellable);
    if (what.isEmpty())
        m_waiting->setWaiting({});
}

void BusyIndicator::setText(const QString& text)
{
    m_label->setText(text);
}

void BusyIndicator::setWaiting(const QString& what)
{
    m_waiting->setWaiting(what);
}

void BusyIndicator::setProgress(quint64 done, quint64 total)
{
    // Per mille: QProgressBar takes ints, files may pass 2 GiB.
    m_bar->setRange(0, 1000);
    m_bar->setValue(int(1000.0 * double(done) / double(total)));
    m_bar->setFormat(formatBytes(done) + QStringLiteral(" / ") + formatBytes(total));
}

} // namespace ui
