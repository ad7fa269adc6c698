// The application window: summary strip, tensor table and layout map over one selection, the
// problems panel, the repack panel, and the open/save/reload machinery around one Model.
// Opening runs through a ModelOpener and saving through a SaveFlow; the window owns the Model
// and its snapshot and rebuilds every view when either hands it a new one. The widgets are
// built in main_window_widgets.cpp, the menus in main_window_menus.cpp.
#pragma once

#include "ui/models/model_snapshot.h"
#include "ui/save/model_holder.h"
#include "ui/save/model_owner.h"

#include "core/plan/save_options.h"
#include "core/result.h"

#include <QMainWindow>
#include <QVariantMap>

#include <functional>
#include <memory>

class QComboBox;
class QDockWidget;
class QFileSystemWatcher;
class QLabel;
class QLineEdit;
class QSplitter;
class QTableView;
class QTimer;

namespace repack {
class Model;
}

namespace ui {

class BeforeAfterPanel;
class BusyIndicator;
class CompareWindow;
class FolderWindow;
class JobTracker;
class LayoutMapView;
class ModelOpener;
class PlacementState;
class PlacementView;
class ProblemsModel;
class RecentFiles;
class RepackPanel;
class SaveFlow;
class SaveJob;
class SummaryStrip;
class TensorFilterProxy;
class TensorTableModel;
struct SaveOutcome;

class MainWindow : public QMainWindow, public ModelHolder {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Starts opening `path` in this window: the model is loaded and its snapshot built on a
    // worker thread while the window stays responsive, then swapped in (modelOpened). On
    // failure the current model stays and openFailed says why (also in a dialog unless
    // `quiet`). A newer open supersedes one still loading. False when nothing was started
    // (a save is running).
    // With pins or changed options pending, asks first (Save / Discard / Cancel): false when
    // cancelled; after Save, the open starts once the save has succeeded.
    bool openFile(const QString& path, bool quiet = false);
    // File > Open URL…: a model on a server (http(s)://, hf://, s3://) opened read-only through
    // openFile; a folder of the Hub (hf://ORG/REPO[@REV]/DIR) in a read-only folder window
    // through openFolder. False when nothing started.
    bool openUrl(const QString& url);
    // Stops the open running now (the Cancel of the status bar); the window keeps its model.
    void cancelOpen();
    // The model shown was opened from a URL, or is one the app ships (ui/util/shipped_files.h):
    // it is saved elsewhere (Save As…), never in place.
    bool isReadOnly() const { return m_snapshot.remote || m_shipped; }
    // Pins or options changed since the model was opened or saved: what closing it would lose.
    bool hasPendingWork() const;
    // File > Quit: closes every window, each asking about its pending work.
    static void quitAll();
    bool isLoading() const;
    QString currentPath() const { return m_snapshot.path; }
    const ModelSnapshot& snapshot() const { return m_snapshot; }
    QString lastError() const { return m_lastError; }

    // Saves to `path` in the background with the repack panel's options; when the save would
    // replace a file other models read (or that no model uses), the worker stops before writing
    // and the window asks first, naming those models. saveFinished reports the end (true also
    // for "saved with a warning"). False when nothing was started.
    bool saveTo(const QString& path);
    // The model is being written, or a save waits to write it (the write lease of its
    // ModelOwner: its own save, or a save of its folder that borrowed it): nothing opens,
    // reloads or plans meanwhile.
    bool isSaving() const;
    void cancelSave();

    TensorTableModel* tensorModel() const { return m_tensorModel; }
    TensorFilterProxy* tensorProxy() const { return m_proxy; }
    QTableView* tensorView() const { return m_table; }
    ProblemsModel* problemsModel() const { return m_problemsModel; }
    LayoutMapView* layoutMap() const { return m_map; }
    SummaryStrip* summary() const { return m_summary; }
    RepackPanel* repackPanel() const { return m_panel; }
    // The "Before / after" dock: the current layout against planSave of saveOptions().
    BeforeAfterPanel* beforeAfter() const { return m_beforeAfter; }
    // Opens a window comparing the open model (A) with the model at `path` (B).
    CompareWindow* compareWith(const QString& path);
    // Opens a window showing the folder of graphs `dir` as one unit (File > Open Folder…), or
    // the folder of the Hub a URL names (File > Open URL…, read-only). A folder of the Hub that
    // cannot be read is an error as a model's is (openFailed, and a dialog); its window, never
    // filled, closes, as it does when its reading is cancelled.
    FolderWindow* openFolder(const QString& dir);
    PlacementState* placementState() const { return m_placement; }
    PlacementView* placementView() const { return m_placementView; }
    // File > Save: disabled, saying why, while the preview finds it would change nothing.
    QAction* saveAction() const { return m_saveAction; }
    QAction* saveAsAction() const { return m_saveAsAction; }
    // The repack panel's options with the placement pins: what Save and the preview use.
    repack::Result<repack::SaveOptions> saveOptions() const;
    // The placement plan as a SPEC 5b JSON file, and back as the pins (one undoable edit,
    // checked on a worker: a plan the save would refuse is refused then, as the placement
    // state's refused/lastRefusal say); false with lastError on failure.
    // Export plans and writes on a worker: true when started, then planExported says how it
    // ended.
    bool exportPlan(const QString& path);
    bool importPlan(const QString& path);
    // Plans are being made on workers: the preview, checks of pin edits, an export.
    bool isPlanning() const;
    QLineEdit* filterEdit() const { return m_filter; }
    QComboBox* storageFilterBox() const { return m_storageFilter; }
    SaveJob* saveJob() const;

    // The names of the selected tensors in view order, one a line (what Copy puts on the
    // clipboard).
    QString selectedNames() const;

public Q_SLOTS:
    void open();
    void openUrlDialog();
    void reload();
    void save();
    void saveAs();
    void copyNames();
    void about();
    void compareWithFile();
    void openFolderDialog();

Q_SIGNALS:
    void modelOpened(const QString& path);
    void openFailed(const QString& path, const QString& error);
    void saveFinished(bool ok);
    // exportPlan ended: written, or not (lastError says why).
    void planExported(const QString& path, bool ok);

public:
    // ModelHolder: a save of the model's folder borrows the model (ui/save/model_holder.h).
    QString heldPath() const override;
    ModelOwner& owner() override { return m_models; }
    QString whyNotLend() const override;
    ModelOwner::WriteLease lend() override;
    void giveBack(bool rewritten) override;

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    void createActions();
    // openFile without asking.
    bool startOpen(const QString& path, bool quiet);
    // Nothing pending, or the user chose Discard: go ahead (true). Save starts the save and
    // runs `then` once it succeeded; Save and Cancel return false.
    bool mayLeave(const QString& doing, std::function<void()> then);
    void createWidgets();
    // createWidgets' steps: the banner, summary, filters, table and map; the docks, each
    // returned for sizing beside the others (Before / after goes as a tab beside Problems).
    void createCentralArea();
    QDockWidget* createRepackDock();
    QDockWidget* createProblemsDock();
    void createBeforeAfterDock(QDockWidget* problemsDock);
    void onOpened(const LoadedModel& loaded);
    void onOpenFailed(const QString& path, const QString& error, bool quiet);
    // Says that `path` (a model, or a folder of the Hub) did not open, and why.
    void reportOpenFailure(const QString& path, const QString& error, bool quiet);
    void onOpenProgress(quint64 done, quint64 total);
    // Shows m_snapshot in every view; `sameTensors`: only where tensors are stored changed.
    void showSnapshot(bool sameTensors = false);
    // Plans the save of saveOptions() on a worker; the repack panel and the Before / after dock
    // show it when it is in (a newer plan supersedes one still being made).
    void updatePreview();
    // Waits for the plans that read the model (preview, pin checks, export); before a save
    // changes it.
    void finishPlanning();
    void createPlacement();
    void showPlacement();
    // Counts the data files' gaps again against the alignment the Repack pane would save with
    // (padding is only what it asks for: core/plan/file_layout.h); whether anything changed.
    bool countGapsForTheNextSave();
    // After countGapsForTheNextSave changed the counts: the summary, map, compact offers and
    // Problems pane.
    void showGapCounts();
    // The snapshot's problems in the Problems pane, and their count in its title.
    void showProblems();
    void addPlanActions(QMenu* file, QMenu* edit);
    void addCompactActions(QMenu* menu);
    void updateTitle();
    // The title's "[*]" (setWindowModified): pending work closing would lose.
    void updateModified();
    // Why a read-only model is not saved in place (isReadOnly).
    QString readOnlyReason() const;
    // Asks where to save a copy (in the home folder for a read-only model); empty when the user
    // cancels.
    QString askSaveAsPath();
    void setBusy(const QString& what);
    void updateActions();
    void onSaved(const SaveOutcome& outcome);
    void unwatchFiles();
    void watchFiles();
    void onFileChanged();
    // "Changed on disk: reload?" (pending work would be lost); Yes loads it again.
    void askToReload();
    void clearFilters();
    void selectTensor(int tensor);
    // Selects `tensors` (filters cleared when one is hidden), the first one current and in view.
    void selectTensors(const QList<int>& tensors);

    ModelOwner m_models; // the model shown, and who may read or write it now
    ModelSnapshot m_snapshot;
    QString m_lastError;

    TensorTableModel* m_tensorModel;
    TensorFilterProxy* m_proxy;
    ProblemsModel* m_problemsModel;
    QTableView* m_table = nullptr;
    QTableView* m_problemsView = nullptr;
    LayoutMapView* m_map = nullptr;
    SummaryStrip* m_summary = nullptr;
    RepackPanel* m_panel = nullptr;
    PlacementState* m_placement = nullptr;
    PlacementView* m_placementView = nullptr;
    QSplitter* m_splitter = nullptr;
    QLineEdit* m_filter = nullptr;
    QComboBox* m_storageFilter = nullptr;
    QTimer* m_filterTimer;
    QTimer* m_previewTimer;
    QTimer* m_changeTimer;
    QFileSystemWatcher* m_watcher;
    ModelOpener* m_opener;
    JobTracker* m_previewJobs;
    JobTracker* m_exportJobs;
    RecentFiles* m_recent = nullptr;
    BusyIndicator* m_busy = nullptr;
    QLabel* m_readOnlyBanner = nullptr; // a remote model: read-only, at which version
    SaveFlow* m_saveFlow = nullptr;
    bool m_askingReload = false;
    std::function<void()> m_afterSave; // what mayLeave's Save waits to do
    QVariantMap m_savingOptions; // the panel's values when the running save started
    static bool s_quitting; // inside quitAll
    bool m_nothingToChange = false; // the preview found an in-place save would write nothing
    bool m_shipped = false; // the model shown is one the app ships: never written

    QAction* m_openAction = nullptr;
    QAction* m_reloadAction = nullptr;
    QAction* m_saveAction = nullptr;
    QAction* m_saveAsAction = nullptr;
    QAction* m_exportPlanAction = nullptr;
    QAction* m_importPlanAction = nullptr;
    QMenu* m_recentMenu = nullptr;
    BeforeAfterPanel* m_beforeAfter = nullptr;
};

} // namespace ui
