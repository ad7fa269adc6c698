// Model A against model B (File > Compare with…): both storage layouts in a LayoutDiffView over
// a diff table filterable by kind of change, one selection shared by both. Everything that
// grows with the models runs on a worker: loading both and a diff that reads no bytes first
// (the layout and table appear with storage-only statuses), then the byte comparison, with
// progress and Cancel, whose content-changed rows update the table in place when it ends. A
// model read where it lives says in the status bar what its reading waits for on the network.
#pragma once

#include "ui/models/layout_diff.h"
#include "ui/util/job_tracker.h"

#include <QMainWindow>
#include <QTimer>

#include <array>
#include <memory>

class QCheckBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableView;

namespace repack {
class CancelToken;
class Model;
} // namespace repack

namespace ui {

class DiffKindFilter;
class DiffTableModel;
class LayoutDiffView;
class WaitLabel;
class WaitRelay;

class CompareWindow : public QMainWindow {
    Q_OBJECT
public:
    // The filter check boxes; each stands for one or more ChangeKinds.
    enum Filter { Added, Removed, Moved, StorageChanged, ContentChanged, Unchanged, FilterCount };

    explicit CompareWindow(QWidget* parent = nullptr);
    ~CompareWindow() override;

    // Starts comparing the models at `a` and `b`; a comparison still running is cancelled.
    void compare(const QString& a, const QString& b);
    bool isRunning() const { return m_stage != Stage::Idle; }
    // True once the bytes were compared (finished(true) was emitted) for the current pair.
    bool contentCompared() const { return m_contentCompared; }
    QString lastError() const { return m_lastError; }

    DiffTableModel* diffModel() const { return m_model; }
    DiffKindFilter* filterModel() const { return m_filter; }
    QTableView* table() const { return m_table; }
    LayoutDiffView* view() const { return m_view; }
    QCheckBox* filterBox(Filter filter) const { return m_boxes[size_t(filter)]; }
    std::shared_ptr<const LayoutDiff> layoutDiff() const { return m_diff; }

public Q_SLOTS:
    void cancel();

Q_SIGNALS:
    // Both models are loaded; layout and table show storage-only statuses.
    void layoutReady();
    // The byte comparison ended: ok, or failed/cancelled (lastError says why).
    void finished(bool ok);

private:
    enum class Stage { Idle, Loading, Comparing };
    struct Shared;
    struct Opened;
    struct Loaded;
    struct Compared;

    // One model (a path or a URL) loaded and its layout snapshot taken, on a worker.
    static std::shared_ptr<Opened> open(const QString& path, const repack::CancelToken* cancel);
    // Both opened: their layouts diffed without reading bytes, on a worker.
    static std::shared_ptr<Loaded> diffLayouts(
        const std::shared_ptr<Opened>& a, const std::shared_ptr<Opened>& b);
    void onOpened(size_t side, const std::shared_ptr<Opened>& opened);
    void onLoaded(const std::shared_ptr<Loaded>& loaded);
    void onCompared(const std::shared_ptr<Compared>& compared);
    void poll();
    // The constructor's steps: the filter boxes over the table of changes (below the map); the
    // map and the table selecting together; the status, progress and Cancel; Ctrl+W and Esc.
    QWidget* createChangeList(QWidget* central);
    void connectSelection();
    void createStatusBar();
    void addShortcuts();
    void fail(const QString& error);
    void updateCounts();
    void setFilterVisible(Filter filter, bool visible);

    DiffTableModel* m_model;
    DiffKindFilter* m_filter;
    LayoutDiffView* m_view;
    QTableView* m_table;
    QLabel* m_titles;
    QLabel* m_status;
    WaitLabel* m_waiting;
    QProgressBar* m_progress;
    QPushButton* m_cancel;
    std::array<QCheckBox*, FilterCount> m_boxes{};
    QTimer m_pollTimer;
    WaitRelay* m_waits;

    Stage m_stage = Stage::Idle;
    bool m_contentCompared = false;
    QString m_lastError;
    std::shared_ptr<const LayoutDiff> m_diff;
    std::shared_ptr<repack::Model> m_a;
    std::shared_ptr<repack::Model> m_b;
    std::shared_ptr<Shared> m_shared; // of the running worker
    // A and B open at once, each on a tracker of its own (m_jobs and m_openB); then m_jobs
    // diffs the layouts, then compares bytes. A new compare() supersedes them all.
    JobTracker m_jobs;
    JobTracker m_openB;
    std::array<std::shared_ptr<Opened>, 2> m_opened; // A and B, as they arrive
};

} // namespace ui
