#include "size_bar_delegate.h"

#include <QPainter>

#include <algorithm>

namespace ui {

SizeBarDelegate::SizeBarDelegate(int valueRole, int maxRole, QObject* parent)
    : QStyledItemDelegate(parent)
    , m_valueRole(valueRole)
    , m_maxRole(maxRole)
{
}

void SizeBarDelegate::paint(
    QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const
{
    // Background and text first, so the translucent bar also shows on selected rows.
    QStyledItemDelegate::paint(painter, option, index);
    const double value = index.data(m_valueRole).toULongLong();
    const double max = index.data(m_maxRole).toULongLong();
    if (max > 0 && value > 0) {
        const double fraction = value / max;
        QRectF bar = QRectF(option.rect).adjusted(1, 2, -1, -2);
        bar.setWidth(std::max(1.0, bar.width() * fraction));
        painter->save();
        painter->setPen(Qt::NoPen);
        const bool selected = option.state & QStyle::State_Selected;
        QColor color = selected ? option.palette.highlightedText().color()
                                : option.palette.highlight().color();
        color.setAlpha(selected ? 70 : 60);
        painter->setBrush(color);
        painter->drawRect(bar);
        painter->restore();
    }
}

} // namespace ui
