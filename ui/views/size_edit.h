// A byte size entered as a number and a binary unit (B, KiB, MiB, GiB).
#pragma once

#include <QWidget>

#include <cstdint>

class QComboBox;
class QDoubleSpinBox;

namespace ui {

class SizeEdit : public QWidget {
    Q_OBJECT
public:
    explicit SizeEdit(QWidget* parent = nullptr);

    uint64_t value() const;
    // Shows `bytes` in the largest unit that divides it exactly.
    void setValue(uint64_t bytes);
    // Text shown instead of 0 (e.g. "no sharding").
    void setZeroText(const QString& text);

    QDoubleSpinBox* spinBox() const { return m_number; }
    QComboBox* unitBox() const { return m_unit; }

Q_SIGNALS:
    void valueChanged();

private:
    QDoubleSpinBox* m_number;
    QComboBox* m_unit;
};

} // namespace ui
