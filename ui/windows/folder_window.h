// A folder of graphs as one unit (File > Open Folder…, or a folder dropped on the window): its
// graphs, its data files and the graphs that read each, the weights stored more than once across
// them, the loaders' verdicts and the folder's problems (core/inspect/folder_inspect.h); and
// "one shared data file", which says the bytes it saves before saving and then saves the folder
// as one unit (core/save/folder_save.h) in the background, with progress and Cancel, and shows
// the folder as it is afterwards. Everything that reads the folder runs on a worker. A save
// that would replace a file other models read asks first, as the single save does
// (ui/save/replace_dialog.h); a window showing one of the graphs lends the save its model
// (ui/save/model_holder.h) and loads the saved graph afterwards.
// A folder of the Hub (hf://ORG/REPO[@REV]/DIR, File > Open URL…) is shown the same way, read
// where it lives (core/remote/model_source.h, every graph at one commit) with Cancel while it is
// read, and what its reading waits for on the network beside the busy bar; it is read-only: its
// save is disabled, and "Save a Local Copy…" writes the folder, at the commit the window shows,
// with one shared data file into a local folder instead, by the core's one save of a remote folder
// (the save `onnx-repack repack hf://…@COMMIT/… -o DIR --shared-data NAME` makes), in the
// background with progress and Cancel.
#pragma once

#include "ui/save/model_owner.h"
#include "ui/util/job_tracker.h"

#include <QMainWindow>
#include <QPointer>

#include <memory>
#include <optional>
#include <vector>

class QAction;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QSplitter;
class QPushButton;
class QStackedWidget;
class QTableWidget;
class QVBoxLayout;

namespace repack {
struct FolderInspection;
class CancelToken;
} // namespace repack

namespace ui {

class FolderMapView;
class ModelHolder;
class WaitLabel;
class WaitRelay;

class FolderWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit FolderWindow(QWidget* parent = nullptr);
    ~FolderWindow() override;

    // Inspects `dir` (again), a path or the URL of a folder of the Hub: the tables fill when it
    // is done (inspected()). Cancel stops the reading (inspected(false), wasCancelled()).
    void openFolder(const QString& dir);
    QString folder() const { return m_dir; }
    // A folder of the Hub (hf://ORG/REPO[@REV]/DIR), or the one the app ships its sample in
    // (ui/util/shipped_files.h): shown, never saved in place.
    bool isReadOnly() const { return m_remote || m_shipped; }
    // Saves the folder in place with one shared data file named `name` (saved() when done).
    // Replacing a file that models outside the folder's graphs read asks first: Replace, a
    // free name instead (the shared name field then says it), or Cancel (saved(false)).
    void saveShared(const QString& name);
    // Save Folder, with the name the shared name field shows: names the data files the save
    // would remove (no model reads them after it) and saves only once the user agreed (Cancel:
    // saved(false), nothing written); with none to remove it saves at once. Waits for the plan
    // of that name if it is still running.
    void confirmAndSave();
    // A folder of the Hub: writes it, at the commit the window shows (whatever its branch is
    // at now), into the local folder `outDir` with one shared data file named `name`
    // (copySaved() when done; what was written, or why not, in savingsLabel()). What the core
    // refuses (the Hugging Face cache, ...) is an error naming `outDir`. Nothing before the
    // window shows the folder's graphs.
    void saveLocalCopy(const QString& outDir, const QString& name);
    bool isBusy() const;
    QString lastError() const { return m_lastError; }
    // The last reading of the folder was cancelled (no error: lastError() is empty).
    bool wasCancelled() const { return m_readCancelled; }

    QTableWidget* graphsTable() const { return m_graphs; }
    QTableWidget* filesTable() const { return m_files; }
    // Each data file's ranges in the colours of the graphs that read them.
    FolderMapView* mapView() const { return m_map; }
    // Selecting a row here selects, in graphsTable(), every graph that holds that weight.
    QTableWidget* sharedTable() const { return m_shared; }
    QTableWidget* problemsTable() const { return m_problems; }
    QLineEdit* sharedNameEdit() const { return m_sharedName; }
    QPushButton* saveButton() const { return m_save; }
    // "Save a Local Copy…", shown for a folder of the Hub: asks for the folder to write.
    QPushButton* saveCopyButton() const { return m_saveCopy; }
    QPushButton* cancelButton() const { return m_cancel; }
    QProgressBar* progressBar() const { return m_progress; }
    QLabel* savingsLabel() const { return m_savings; }
    // File > Save Folder (Ctrl+S), as the button; for a folder of the Hub, disabled, and
    // File > Save a Local Copy… in its place.
    QAction* saveAction() const { return m_saveAction; }

public Q_SLOTS:
    void cancel();

Q_SIGNALS:
    void inspected(bool ok);
    void saved(bool ok);
    void copySaved(bool ok);

private:
    // A save asked for, waiting for the windows of its graphs to lend their models.
    struct Pending {
        QString name;
        bool force = false;
    };
    // A window's model lent to the save: no lease yet while a reader of it lingers.
    struct Loan {
        QPointer<QObject> window;
        ModelHolder* holder = nullptr;
        ModelOwner::WriteLease lease;
    };
    void startSave(const QString& name, bool force);
    // A new cancel token for a command about to start, what it waits for said beside the bar.
    void newCommand();
    // A new command and the progress at 0, for a save about to start.
    void prepareSave();
    // Borrows the model of every window showing a graph of the folder, then runs the save.
    void borrowAndSave();
    void runSave(const Pending& save);
    // Gives every lent model back; `rewritten`: the files on disk changed.
    void giveBack(bool rewritten);
    // File (Save Folder, Save a Local Copy…, Open Recent, Close) and Help, as the main window's.
    // The constructor's steps: the summary over the five panes; the row of the shared name, the
    // savings (or the save's progress) and the buttons; the graphs selected with a shared
    // weight or a range of the map; the progress of a reading or a save, polled.
    void createPanes(QWidget* central, QVBoxLayout* layout);
    QHBoxLayout* createSaveRow(QWidget* central);
    void connectSelections();
    void startPolling();
    void createMenus();
    void fill(const std::shared_ptr<const repack::FolderInspection>& folder);
    // Gives each table the height its rows need (a few at most, so the map keeps its room),
    // the map the rest.
    void fitPanes();
    void planSavings();
    // Asks for a local folder, then saves the copy into it.
    void askAndSaveLocalCopy();
    // Why a folder of the Hub is not saved here, and how a local copy is saved.
    QString readOnlyReason() const;
    // The reading's progress in the status row: the bytes compared, or busy until known.
    void showReading();
    void setBusy(bool busy, const QString& what);

    QString m_dir;
    bool m_remote = false;
    bool m_shipped = false; // the folder of the sample the app ships
    // A folder of the Hub at the commit the window shows (hf://ORG/REPO@COMMIT/DIR/), what its
    // local copy copies; empty until its graphs were read.
    QString m_pinned;
    QString m_lastError;
    bool m_readCancelled = false;
    std::shared_ptr<const repack::FolderInspection> m_folder; // what the tables show
    QTableWidget* m_graphs = nullptr;
    QTableWidget* m_files = nullptr;
    FolderMapView* m_map = nullptr;
    QSplitter* m_splitter = nullptr;
    QTableWidget* m_shared = nullptr;
    QTableWidget* m_problems = nullptr;
    QLabel* m_summary = nullptr;
    QLineEdit* m_sharedName = nullptr;
    QLabel* m_savings = nullptr;
    QStackedWidget* m_status = nullptr; // the savings, or the work's progress in their place
    QWidget* m_working = nullptr; // the progress: the bar, and what the work waits for
    WaitLabel* m_waiting = nullptr;
    QPushButton* m_save = nullptr;
    QAction* m_saveAction = nullptr;
    QAction* m_saveCopyAction = nullptr;
    QString m_localSaveTip; // what Save does to a local folder
    QPushButton* m_saveCopy = nullptr;
    QPushButton* m_cancel = nullptr;
    QProgressBar* m_progress = nullptr;
    JobTracker m_inspect;
    JobTracker m_plan;
    JobTracker m_saving;
    std::shared_ptr<repack::CancelToken> m_cancelToken;
    WaitRelay* m_waits = nullptr; // what the command of m_cancelToken waits for
    // The save's progress, or the reading's (-1 while not known), polled.
    std::shared_ptr<std::atomic<int>> m_permille;
    std::shared_ptr<std::atomic<int>> m_phase; // 1 comparing, 2 writing, 0 another step
    QString m_savingName; // the shared file being written
    QString m_savedText; // what the last save wrote, until the name is edited or saved again
    // The latest plan of the savings, written by its job: a save asked for waits for it and
    // names the files it would remove.
    struct Planned;
    std::shared_ptr<Planned> m_planned;
    std::optional<Pending> m_pending;
    std::vector<Loan> m_loans;
};

} // namespace ui
