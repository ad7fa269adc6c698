// MainWindow's placement plan (SPEC 5b): the Placement dock, the pins' wiring into the
// table, the layout map and the preview, the "Move to" context menu, and plan export/import.
#include "main_window.h"

#include "ui/models/placement_model.h"
#include "ui/models/placement_state.h"
#include "ui/models/tensor_filter_proxy.h"
#include "ui/models/tensor_table_model.h"
#include "ui/save/save_planning.h"
#include "ui/util/job_tracker.h"
#include "ui/views/compact_action.h"
#include "ui/views/layout_map_view.h"
#include "ui/views/placement_view.h"
#include "ui/views/repack_panel.h"
#include "ui/views/summary_strip.h"

#include "core/model/model.h"
#include "core/plan/file_layout.h"
#include "core/plan/placement_plan.h"

#include <QAction>
#include <QCursor>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QScrollBar>
#include <QSet>
#include <QStatusBar>
#include <QTableView>
#include <QToolTip>

namespace ui {
namespace {

// The save's data file of the model shown, as the panel names it (none without a model).
QString saveDataFileName(const RepackPanel& panel, const ModelSnapshot& snapshot)
{
    return snapshot.path.isEmpty() ? QString() : panel.saveDataFile(snapshot.path);
}

} // namespace

repack::Result<repack::SaveOptions> MainWindow::saveOptions() const
{
    auto options = m_panel->options();
    if (options)
        options->placements = m_placement->plan();
    return options;
}

void MainWindow::createPlacement()
{
    m_placement = new PlacementState(this);
    m_placement->setPlanCheck([this]() -> PlacementState::PlanCheck {
        // Not while a save's worker writes the model (no read lease then).
        ModelOwner::ReadLease model = m_models.read();
        if (!model)
            return {};
        auto options = m_panel->options();
        if (!options) // the preview says why
            return {};
        const SavePlanning planning{
            std::move(model), m_snapshot.path.toStdString(), std::move(*options)};
        return [planning](const std::vector<repack::TensorPlacement>& plan) {
            SavePlanning withPins = planning;
            withPins.options.placements = plan;
            auto planned = withPins.plan();
            return planned ? QString() : QString::fromStdString(planned.error().message);
        };
    });
    m_placementView = new PlacementView(m_placement, this);
    m_placementView->setSelectionModel(m_table->selectionModel(), m_proxy);
    m_tensorModel->setPlacementState(m_placement);
    m_map->setPlacementState(m_placement);

    m_table->setDragEnabled(true);
    m_table->setDragDropMode(QAbstractItemView::DragOnly);
    m_table->setDefaultDropAction(Qt::CopyAction);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, [this](QPoint pos) {
        if (!m_models.hasModel() || m_table->selectionModel()->selectedRows().isEmpty())
            return;
        QMenu menu(this);
        m_placementView->fillMoveMenu(&menu);
        addCompactActions(&menu);
        menu.exec(m_table->viewport()->mapToGlobal(pos));
    });
    connect(m_map, &LayoutMapView::tensorsDropped, m_placementView, &PlacementView::dropOnFile);
    connect(m_map, &LayoutMapView::compactRequested, m_panel,
        [panel = m_panel](const QString& location) { panel->setCompactFile(location); });
    connect(m_placement, &PlacementState::pinsChanged, this, [this] { updatePreview(); });
    // Undo shows what it undid: the rows whose pins changed back, or the field.
    m_panel->setUndoStack(m_placement->undoStack());
    connect(m_placement, &PlacementState::revisited, this,
        [this](const QList<int>& tensors, bool undone) {
            selectTensors(tensors);
            statusBar()->showMessage(
                (undone ? tr("Undone: the pins of %n tensor(s)", nullptr, int(tensors.size()))
                        : tr("Redone: the pins of %n tensor(s)", nullptr, int(tensors.size()))),
                5000);
        });
    connect(m_panel, &RepackPanel::editRevisited, this, [this](const QString& label, bool undone) {
        if (auto* dock = qobject_cast<QDockWidget*>(m_panel->parentWidget()); dock) {
            dock->show();
            dock->raise();
        }
        statusBar()->showMessage((undone ? tr("Undone: %1") : tr("Redone: %1")).arg(label), 5000);
    });
    // Said where the drop happened, and kept in the status bar.
    connect(m_placement, &PlacementState::refused, this, [this](const QString& reason) {
        statusBar()->showMessage(reason, 10000);
        if (isVisible())
            QToolTip::showText(QCursor::pos(), reason, this);
    });
    connect(m_panel, &RepackPanel::optionsChanged, this, [this] {
        m_placementView->model()->setSaveDataFile(saveDataFileName(*m_panel, m_snapshot));
        if (countGapsForTheNextSave())
            showGapCounts();
    });

    auto* dock = new QDockWidget(tr("Placement"), this);
    dock->setObjectName(QStringLiteral("placementDock"));
    dock->setWidget(m_placementView);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable
        | QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::RightDockWidgetArea, dock);
}

// "Compact <file>" for each data file the selected tensors are in.
void MainWindow::addCompactActions(QMenu* menu)
{
    QSet<QString> files;
    for (const QModelIndex& index : m_table->selectionModel()->selectedRows()) {
        const TensorRow& row = m_snapshot.tensors[m_proxy->mapToSource(index).row()];
        if (row.external)
            files.insert(QDir::cleanPath(row.storage));
    }
    bool first = true;
    for (const repack::FileLayout& file : m_snapshot.layouts) {
        if (!files.contains(QDir::cleanPath(QString::fromStdString(file.location))))
            continue;
        if (std::exchange(first, false))
            menu->addSeparator();
        QAction* compact = addCompactAction(menu, file);
        connect(compact, &QAction::triggered, m_panel,
            [panel = m_panel, location = compact->data().toString()] {
                panel->setCompactFile(location);
            });
    }
}

bool MainWindow::countGapsForTheNextSave()
{
    const auto options = m_panel->options();
    if (!options)
        return false; // an option the pane refuses: the counts stay as they were
    return countGapsAgainst(m_snapshot, options->alignment);
}

void MainWindow::showGapCounts()
{
    // The map keeps where the user was looking.
    const double zoom = m_map->zoom();
    const int scroll = m_map->horizontalScrollBar()->value();
    m_summary->setSnapshot(m_snapshot);
    m_map->setSnapshot(m_snapshot);
    m_map->setZoom(zoom, 0);
    m_map->horizontalScrollBar()->setValue(scroll);
    m_panel->setCompactOffers(compactOffers(m_snapshot.layouts));
    showProblems();
}

void MainWindow::showPlacement()
{
    // Pins belong to the tensors they were made for: a new model, a reload or a save (whose
    // result already is the plan) starts without pins.
    m_placement->setSnapshot(m_snapshot);
    m_placementView->model()->setSnapshot(m_snapshot);
    m_placementView->model()->setSaveDataFile(saveDataFileName(*m_panel, m_snapshot));
    m_panel->setCompactOffers(compactOffers(m_snapshot.layouts));
}

void MainWindow::addPlanActions(QMenu* file, QMenu* edit)
{
    // After Save As, before the next group.
    const QList<QAction*> fileActions = file->actions();
    const qsizetype saveAs = fileActions.indexOf(m_saveAsAction);
    QAction* before
        = saveAs >= 0 && saveAs + 1 < fileActions.size() ? fileActions[saveAs + 1] : nullptr;
    auto* separator = new QAction(this);
    separator->setSeparator(true);
    m_exportPlanAction = new QAction(tr("E&xport Plan…"), this);
    m_importPlanAction = new QAction(tr("&Import Plan…"), this);
    file->insertActions(before, {separator, m_exportPlanAction, m_importPlanAction});
    connect(m_exportPlanAction, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export Placement Plan"),
            QFileInfo(m_snapshot.path).absolutePath(), tr("Placement plans (*.json)"));
        if (!path.isEmpty())
            exportPlan(path);
    });
    connect(m_importPlanAction, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Import Placement Plan"),
            QFileInfo(m_snapshot.path).absolutePath(), tr("Placement plans (*.json)"));
        if (!path.isEmpty())
            importPlan(path);
    });

    edit->addSeparator();
    edit->addAction(m_placementView->undoAction());
    edit->addAction(m_placementView->redoAction());
    QMenu* move = edit->addMenu(tr("&Move Selection To"));
    move->addAction(m_placementView->moveInlineAction());
    move->addAction(m_placementView->moveExternalAction());
    edit->addAction(m_placementView->resetPinsAction());
    edit->addAction(m_placementView->resetAllAction());
}

bool MainWindow::exportPlan(const QString& path)
{
    ModelOwner::ReadLease model = m_models.read();
    if (!model || isLoading())
        return false;
    auto options = saveOptions();
    if (!options) {
        QMessageBox::warning(
            this, tr("Cannot export the plan"), QString::fromStdString(options.error().message));
        return false;
    }
    m_exportJobs->start(
        [planning
            = SavePlanning{std::move(model), m_snapshot.path.toStdString(), std::move(*options)},
            modelPath = m_snapshot.path.toStdString(), path] {
            auto plan = planning.plan();
            if (!plan)
                return QString::fromStdString(plan.error().message);
            const std::string text = repack::planFileText(*planning.model, plan.value(), modelPath);
            QFile file(path);
            if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)
                || file.write(text.data(), qint64(text.size())) != qint64(text.size())
                || !file.flush())
                return file.errorString();
            return QString();
        },
        [this, path](const QString& error) {
            if (!error.isEmpty()) {
                m_lastError = tr("Cannot export the plan to %1: %2").arg(path, error);
                statusBar()->showMessage(m_lastError, 10000);
            } else {
                statusBar()->showMessage(tr("Exported the plan to %1").arg(path), 5000);
            }
            Q_EMIT planExported(path, error.isEmpty());
        });
    return true;
}

bool MainWindow::importPlan(const QString& path)
{
    const ModelOwner::ReadLease model = m_models.read();
    if (!model || isLoading())
        return false;
    auto plan = repack::readPlanFile(*model, path.toStdString());
    if (!plan) {
        m_lastError = QString::fromStdString(plan.error().message);
        statusBar()->showMessage(m_lastError, 10000);
        return false;
    }
    // Checked on a worker like a drop: a plan the save would refuse is refused then.
    const QString name = QFileInfo(path).fileName();
    m_placement->replaceAll(plan.value(), tr("Import plan %1").arg(name), [this, name] {
        statusBar()->showMessage(
            tr("Imported the plan %1: %n tensor(s) pinned", nullptr, m_placement->pinnedCount())
                .arg(name),
            5000);
    });
    return true;
}

} // namespace ui
