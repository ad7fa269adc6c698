// The Placement pane: the destinations (PlacementModel) as drop targets for tensor rows dragged
// from the table or the layout map, Reset pins / Reset all, Undo / Redo; and the keyboard's way
// to the same edits, the "Move to" actions and menu that act on the shared table selection.
#pragma once

#include "ui/models/tensor_selection.h"

#include "core/plan/save_options.h"

#include <QPointer>
#include <QWidget>

#include <functional>

class QAbstractProxyModel;
class QAction;
class QItemSelectionModel;
class QListView;
class QMenu;

namespace ui {

class PlacementModel;
class PlacementState;

class PlacementView : public QWidget {
    Q_OBJECT
public:
    explicit PlacementView(PlacementState* state, QWidget* parent = nullptr);

    // The tensors the actions act on: rows of `proxy` selected in `selection`.
    void setSelectionModel(QItemSelectionModel* selection, QAbstractProxyModel* proxy);
    QList<int> selectedTensors() const;

    PlacementModel* model() const { return m_model; }
    QListView* list() const { return m_list; }
    // What the list says under its destinations while nothing is pinned (rows and map blocks
    // are dropped on them); empty once something is.
    QString hint() const;
    PlacementState* state() const { return m_state; }

    // Pins `tensors` to the destination of `row` ("New data file…" asks for a name first).
    // False when refused (the state's lastRefusal says why) or cancelled.
    bool dropOnRow(int row, const QList<int>& tensors);
    // Pins `tensors` to data file `location` as shown in the layout map.
    bool dropOnFile(const QList<int>& tensors, const QString& location);
    // Asks for a new data file's name and pins `tensors` there.
    bool moveToNewFile(const QList<int>& tensors);
    // How a new data file's name is asked for (a dialog; tests answer it directly).
    void setNameAsker(std::function<QString()> ask) { m_askName = std::move(ask); }

    // "Move to" with every destination, then Reset pin: for the table's context menu.
    void fillMoveMenu(QMenu* menu);
    QAction* moveInlineAction() const { return m_moveInline; }
    QAction* moveExternalAction() const { return m_moveExternal; }
    QAction* resetPinsAction() const { return m_resetPins; }
    QAction* resetAllAction() const { return m_resetAll; }
    QAction* undoAction() const { return m_undo; }
    QAction* redoAction() const { return m_redo; }

protected:
    // Disabled (while a save runs): the edits' actions too, wherever they sit (menus, shortcuts).
    void changeEvent(QEvent* event) override;

private:
    void updateActions();

    PlacementState* m_state;
    PlacementModel* m_model;
    QListView* m_list;
    TensorSelection m_selection;
    std::function<QString()> m_askName;
    QAction* m_moveInline;
    QAction* m_moveExternal;
    QAction* m_resetPins;
    QAction* m_resetAll;
    QAction* m_undo;
    QAction* m_redo;
};

} // namespace ui
