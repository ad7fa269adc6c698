#include "placement_view.h"

#include "elided_tool_tips.h"
#include "ui/models/placement_model.h"
#include "ui/models/placement_state.h"
#include "ui/models/tensor_table_model.h"

#include <QAbstractProxyModel>
#include <QAction>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QEvent>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QListView>
#include <QMenu>
#include <QMimeData>
#include <QPainter>
#include <QPushButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include <utility>

namespace ui {
namespace {

// The destinations list: accepts tensor rows of the open model on any destination row.
class DestinationList : public QListView {
public:
    explicit DestinationList(PlacementView* pane)
        : QListView(pane)
        , m_pane(pane)
    {
        setAcceptDrops(true);
        setDragDropMode(QAbstractItemView::DropOnly);
        setDropIndicatorShown(true);
        setSelectionMode(QAbstractItemView::SingleSelection);
        setUniformItemSizes(true);
    }

    // Painted under the destinations while not empty: it takes no room from other panes.
    void setHint(const QString& hint)
    {
        m_hint = hint;
        viewport()->update();
    }
    QString hint() const { return m_hint; }

protected:
    QList<int> tensors(const QMimeData* mime) const
    {
        return TensorTableModel::tensorsFromMime(mime, m_pane->state()->modelPath());
    }
    void dragEnterEvent(QDragEnterEvent* event) override
    {
        if (event->mimeData()->hasFormat(QString::fromLatin1(TensorTableModel::kMimeType)))
            event->accept();
        else
            event->ignore();
    }
    void dragMoveEvent(QDragMoveEvent* event) override
    {
        const QModelIndex index = indexAt(event->position().toPoint());
        if (index.isValid() && !tensors(event->mimeData()).isEmpty()) {
            setCurrentIndex(index);
            event->setDropAction(Qt::CopyAction);
            event->accept();
        } else {
            event->ignore();
        }
    }
    void dragLeaveEvent(QDragLeaveEvent* event) override
    {
        clearSelection();
        event->accept();
    }
    void dropEvent(QDropEvent* event) override
    {
        const QModelIndex index = indexAt(event->position().toPoint());
        const QList<int> dropped = tensors(event->mimeData());
        if (!index.isValid() || dropped.isEmpty()) {
            event->ignore();
            return;
        }
        // Accepted even when refused: the drop was seen, and the state says why nothing changed.
        event->setDropAction(Qt::CopyAction);
        event->accept();
        clearSelection();
        m_pane->dropOnRow(index.row(), dropped);
    }
    void paintEvent(QPaintEvent* event) override
    {
        QListView::paintEvent(event);
        if (m_hint.isEmpty())
            return;
        int top = 0;
        if (const int rows = model() ? model()->rowCount() : 0; rows > 0)
            top = visualRect(model()->index(rows - 1, 0)).bottom() + 1;
        const QRect room = viewport()->rect().adjusted(4, top + 6, -4, -4);
        // Whole lines only: the long hint, else its short form, else nothing (the list's
        // tooltip says it too).
        const int flags = Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap;
        for (const QString& text :
            {m_hint, PlacementView::tr("Drop tensor rows or map blocks here.")}) {
            if (fontMetrics().boundingRect(room, flags, text).height() > room.height())
                continue;
            QPainter painter(viewport());
            painter.setPen(palette().color(QPalette::Disabled, QPalette::Text));
            painter.drawText(room, flags, text);
            return;
        }
    }

private:
    PlacementView* m_pane;
    QString m_hint;
};

} // namespace

PlacementView::PlacementView(PlacementState* state, QWidget* parent)
    : QWidget(parent)
    , m_state(state)
    , m_model(new PlacementModel(state, this))
    , m_list(new DestinationList(this))
{
    m_list->setModel(m_model);
    showCutTextInToolTips(m_list);
    m_list->setToolTip(tr("Drag tensors from the table or the layout map onto a destination to "
                          "pin them there; tensors not pinned follow the threshold."));

    m_askName = [this] {
        return QInputDialog::getText(this, tr("New Data File"),
            tr("Name of the data file, relative to the model's folder:"));
    };

    m_moveInline = new QAction(tr("&Inline"), this);
    m_moveInline->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
    connect(m_moveInline, &QAction::triggered, this,
        [this] { m_state->pinTo(selectedTensors(), {repack::Placement::Inline}); });
    m_moveExternal = new QAction(tr("Save's &Data File"), this);
    m_moveExternal->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    connect(m_moveExternal, &QAction::triggered, this,
        [this] { m_state->pinTo(selectedTensors(), {repack::Placement::External}); });
    m_resetPins = new QAction(tr("&Reset Pin"), this);
    m_resetPins->setToolTip(tr("The selected tensors follow the threshold again."));
    connect(
        m_resetPins, &QAction::triggered, this, [this] { m_state->resetPins(selectedTensors()); });
    m_resetAll = new QAction(tr("Reset &All Pins"), this);
    connect(m_resetAll, &QAction::triggered, m_state, &PlacementState::resetAll);
    m_undo = m_state->undoStack()->createUndoAction(this, tr("&Undo"));
    m_undo->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Z));
    m_redo = m_state->undoStack()->createRedoAction(this, tr("&Redo"));
    m_redo->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z));

    auto* buttons = new QHBoxLayout;
    auto* reset = new QPushButton(tr("Reset pins"), this);
    reset->setToolTip(m_resetPins->toolTip());
    connect(reset, &QPushButton::clicked, m_resetPins, &QAction::trigger);
    connect(m_resetPins, &QAction::changed, reset,
        [this, reset] { reset->setEnabled(m_resetPins->isEnabled()); });
    auto* resetAll = new QPushButton(tr("Reset all"), this);
    connect(resetAll, &QPushButton::clicked, m_resetAll, &QAction::trigger);
    connect(m_resetAll, &QAction::changed, resetAll,
        [this, resetAll] { resetAll->setEnabled(m_resetAll->isEnabled()); });
    buttons->addWidget(reset);
    buttons->addWidget(resetAll);
    // Short labels here; the Edit menu's actions name the edit ("Undo Move 3 tensors to …").
    auto* undo = new QPushButton(tr("Undo"), this);
    auto* redo = new QPushButton(tr("Redo"), this);
    for (auto [button, action] : {std::pair{undo, m_undo}, std::pair{redo, m_redo}}) {
        button->setEnabled(action->isEnabled());
        connect(button, &QPushButton::clicked, action, &QAction::trigger);
        connect(action, &QAction::changed, button,
            [button, action] { button->setEnabled(action->isEnabled()); });
        button->setToolTip(action->shortcut().toString(QKeySequence::NativeText));
        buttons->addWidget(button);
    }
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_list, 1);
    layout->addLayout(buttons);

    connect(m_state, &PlacementState::pinsChanged, this, &PlacementView::updateActions);
    connect(m_model, &QAbstractItemModel::modelReset, this, &PlacementView::updateActions);
    updateActions();
}

void PlacementView::setSelectionModel(QItemSelectionModel* selection, QAbstractProxyModel* proxy)
{
    m_selection.set(selection, proxy, this, {});
}

QList<int> PlacementView::selectedTensors() const
{
    const std::vector<int> selected = m_selection.tensors();
    return QList<int>(selected.begin(), selected.end());
}

void PlacementView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::EnabledChange)
        updateActions();
}

void PlacementView::updateActions()
{
    const bool enabled = isEnabled();
    for (QAction* action : {m_moveInline, m_moveExternal})
        action->setEnabled(enabled);
    // The save's data file by the name the pane shows ("weights.bin (Save's Data File)").
    const QString name = QString(m_model->saveDataFile()).replace(u'&', QStringLiteral("&&"));
    m_moveExternal->setText(
        name.isEmpty() ? tr("Save's &Data File") : tr("%1 (Save's &Data File)").arg(name));
    // A first-time user sees a list of destinations and nothing to do with it: say it, until
    // something is pinned.
    static_cast<DestinationList*>(m_list)->setHint(m_state->pinnedCount() == 0
            ? tr("Drag tensor rows from the table, or blocks from the layout map, onto a "
                 "destination above to pin them there.")
            : QString());
    // Resetting needs a pin to reset.
    m_resetPins->setEnabled(enabled && m_state->pinnedCount() > 0);
    m_resetAll->setEnabled(enabled && m_state->pinnedCount() > 0);
}

QString PlacementView::hint() const
{
    return static_cast<const DestinationList*>(m_list)->hint();
}

bool PlacementView::dropOnRow(int row, const QList<int>& tensors)
{
    if (tensors.isEmpty())
        return false;
    if (m_model->index(row).data(PlacementModel::KindRole).toInt()
        == int(PlacementModel::Kind::NewFile))
        return moveToNewFile(tensors);
    if (row < 0 || row >= m_model->rowCount())
        return false;
    return m_state->pinTo(tensors, m_model->destination(row));
}

bool PlacementView::dropOnFile(const QList<int>& tensors, const QString& location)
{
    // The save's data file is pinned as "the save's data file", so it keeps following the name
    // set in the repack panel and its sharding.
    const int row = m_model->rowOf(location);
    if (row >= 0)
        return dropOnRow(row, tensors);
    return m_state->pinTo(tensors, {repack::Placement::External, location.toStdString()});
}

bool PlacementView::moveToNewFile(const QList<int>& tensors)
{
    if (tensors.isEmpty())
        return false;
    const QString name = m_askName ? m_askName().trimmed() : QString();
    if (name.isEmpty())
        return false;
    return m_state->pinTo(tensors, {repack::Placement::External, name.toStdString()});
}

void PlacementView::fillMoveMenu(QMenu* menu)
{
    QMenu* move = menu->addMenu(tr("&Move to"));
    move->addAction(m_moveInline);
    move->addAction(m_moveExternal);
    const QList<int> tensors = selectedTensors();
    for (int row = 0; row < m_model->rowCount(); ++row) {
        if (m_model->index(row).data(PlacementModel::KindRole).toInt()
            != int(PlacementModel::Kind::File))
            continue;
        const QString location = m_model->index(row).data(PlacementModel::LocationRole).toString();
        move->addAction(
            location, this, [this, tensors, location] { dropOnFile(tensors, location); });
    }
    move->addSeparator();
    move->addAction(tr("&New Data File…"), this, [this, tensors] { moveToNewFile(tensors); });
    menu->addAction(m_resetPins);
}

} // namespace ui
