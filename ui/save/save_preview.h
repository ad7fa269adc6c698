// The preview of a pending repack: the repack panel's sentence (what a planned save would move,
// in words), and the "Before / after" panel drawing the current layout against the planned one.
#pragma once

#include "ui/models/layout_diff.h"
#include "ui/util/job_tracker.h"

#include <QString>
#include <QWidget>

#include <memory>
#include <vector>

class QAbstractProxyModel;
class QItemSelectionModel;
class QLabel;

namespace repack {
struct FileLayout;
struct SaveConflict;
struct SavePlan;
} // namespace repack

namespace ui {

class LayoutDiffView;
struct ModelSnapshot;

// What `plan` changes, in words: tensors that move, the files after the save, and the orphaned
// bytes a file keeps or loses. Reads the rows and the layouts' totals of `current`.
QString describePlan(const repack::SavePlan& plan, const ModelSnapshot& current);
// What the preview says before Save is pressed of the files the save would ask about before
// replacing them (askToReplace's lines), and of the name it would offer to write instead
// (`insteadName`, when not empty).
QString describeConflicts(
    const std::vector<repack::SaveConflict>& conflicts, const QString& insteadName);
// The data files of `snapshot` without their regions: what describePlan reads of them.
std::vector<repack::FileLayout> fileTotals(const ModelSnapshot& snapshot);

// A LayoutDiffView of beforeAfterDiff(current, plan). The diff of a 100,000-tensor model is
// built on a worker, and only while the panel is visible (a hidden panel keeps the latest plan
// and builds it when shown); a newer plan supersedes one still being built.
class BeforeAfterPanel : public QWidget {
    Q_OBJECT
public:
    explicit BeforeAfterPanel(QWidget* parent = nullptr);
    ~BeforeAfterPanel() override;

    void setPlan(const ModelSnapshot& current, const repack::SavePlan& plan);
    // No plan: the options cannot be saved (`reason`), or no model is open.
    void clear(const QString& reason = {});
    LayoutDiffView* view() const { return m_view; }
    // True while a diff is being built or waits for the panel to be shown.
    bool isPending() const;

Q_SIGNALS:
    void updated(); // the view shows the latest plan

protected:
    void showEvent(QShowEvent* event) override;

private:
    struct Input;
    void build();

    LayoutDiffView* m_view;
    QLabel* m_message;
    std::shared_ptr<Input> m_pending; // the latest plan, not built yet
    JobTracker m_jobs; // builds one diff at a time; the latest plan waits in m_pending
};

} // namespace ui
