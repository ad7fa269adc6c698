// Draws a tensor's size as a bar proportional to the largest tensor, over the text, in the
// manner of hotspot's CostDelegate.
#pragma once

#include <QStyledItemDelegate>

namespace ui {

class SizeBarDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    // `valueRole` holds the numeric size, `maxRole` the size that fills the whole cell.
    SizeBarDelegate(int valueRole, int maxRole, QObject* parent = nullptr);

    void paint(QPainter* painter, const QStyleOptionViewItem& option,
        const QModelIndex& index) const override;

private:
    int m_valueRole;
    int m_maxRole;
};

} // namespace ui
