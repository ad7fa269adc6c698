#include "elided_tool_tips.h"

#include <QAbstractItemDelegate>
#include <QAbstractItemView>
#include <QHelpEvent>
#include <QStyle>
#include <QStyleOptionViewItem>
#include <QToolTip>

namespace ui {
namespace {

class CutTextToolTips : public QObject {
public:
    explicit CutTextToolTips(QAbstractItemView* view)
        : QObject(view)
        , m_view(view)
    {
        view->viewport()->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() != QEvent::ToolTip || watched != m_view->viewport())
            return false;
        const auto* help = static_cast<QHelpEvent*>(event);
        const QModelIndex index = m_view->indexAt(help->pos());
        if (!index.isValid())
            return false;
        const QString cut = cutText(m_view, index);
        const QString own = index.data(Qt::ToolTipRole).toString();
        // The model's own tooltip, which says more, unless the text cut short is not in it:
        // then that text whole, first.
        if (cut.isEmpty() || own.contains(cut))
            return false; // the view shows the model's own tooltip, if any
        QToolTip::showText(help->globalPos(), own.isEmpty() ? cut : cut + u'\n' + own,
            m_view->viewport(), m_view->visualRect(index));
        return true;
    }

private:
    QAbstractItemView* m_view;
};

} // namespace

void showCutTextInToolTips(QAbstractItemView* view)
{
    new CutTextToolTips(view);
}

QString cutText(const QAbstractItemView* view, const QModelIndex& index)
{
    const QString text = index.data(Qt::DisplayRole).toString();
    QAbstractItemDelegate* delegate = view->itemDelegateForIndex(index);
    if (text.isEmpty() || !delegate)
        return {};
    // What the delegate would need to show the cell whole (text, icon and margins), as the
    // view lays it out (QAbstractItemView::initViewItemOption's fields that size it).
    QStyleOptionViewItem option;
    option.initFrom(view);
    option.widget = view;
    option.font = view->font();
    option.fontMetrics = view->fontMetrics();
    const int icon = view->style()->pixelMetric(QStyle::PM_SmallIconSize, nullptr, view);
    option.decorationSize = view->iconSize().isValid() ? view->iconSize() : QSize(icon, icon);
    option.rect = view->visualRect(index);
    return delegate->sizeHint(option, index).width() > option.rect.width() ? text : QString();
}

} // namespace ui
