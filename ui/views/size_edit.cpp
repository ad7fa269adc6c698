#include "size_edit.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>

#include <cmath>

namespace ui {

SizeEdit::SizeEdit(QWidget* parent)
    : QWidget(parent)
    , m_number(new QDoubleSpinBox(this))
    , m_unit(new QComboBox(this))
{
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    m_number->setRange(0, 1023999);
    m_number->setDecimals(1);
    m_number->setAccelerated(true);
    m_number->setAlignment(Qt::AlignRight);
    m_unit->addItem(QStringLiteral("B"), QVariant::fromValue<qulonglong>(1));
    m_unit->addItem(QStringLiteral("KiB"), QVariant::fromValue<qulonglong>(1ull << 10));
    m_unit->addItem(QStringLiteral("MiB"), QVariant::fromValue<qulonglong>(1ull << 20));
    m_unit->addItem(QStringLiteral("GiB"), QVariant::fromValue<qulonglong>(1ull << 30));
    layout->addWidget(m_number, 1);
    layout->addWidget(m_unit);
    connect(m_number, &QDoubleSpinBox::valueChanged, this, &SizeEdit::valueChanged);
    connect(m_unit, &QComboBox::currentIndexChanged, this, &SizeEdit::valueChanged);
}

uint64_t SizeEdit::value() const
{
    return uint64_t(std::llround(m_number->value() * double(m_unit->currentData().toULongLong())));
}

void SizeEdit::setValue(uint64_t bytes)
{
    int unit = 0;
    while (unit + 1 < m_unit->count() && bytes >= (1ull << (10 * (unit + 1)))
        && bytes % (1ull << (10 * (unit + 1))) == 0)
        ++unit;
    const QSignalBlocker blockUnit(m_unit);
    const QSignalBlocker blockNumber(m_number);
    m_unit->setCurrentIndex(unit);
    m_number->setValue(double(bytes) / double(1ull << (10 * unit)));
    Q_EMIT valueChanged();
}

void SizeEdit::setZeroText(const QString& text)
{
    m_number->setSpecialValueText(text);
}

} // namespace ui
