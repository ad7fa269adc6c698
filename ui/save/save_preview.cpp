#include "save_preview.h"

#include "replace_dialog.h"
#include "ui/models/layout_diff.h"
#include "ui/models/model_snapshot.h"
#include "ui/util/background.h"
#include "ui/util/byte_format.h"
#include "ui/views/layout_diff_view.h"

#include "core/inspect/plan_diff.h"
#include "core/plan/save_plan.h"

#include <QCoreApplication>
#include <QLabel>
#include <QStringList>
#include <QVBoxLayout>

namespace ui {

QString describeConflicts(
    const std::vector<repack::SaveConflict>& conflicts, const QString& insteadName)
{
    if (conflicts.empty())
        return {};
    auto tr = [](const char* text) { return QCoreApplication::translate("SavePreview", text); };
    QString text = tr("Save will ask first: it would replace files that are not only this "
                      "model's.")
        + u'\n' + describeConflicts(conflicts).join(u'\n');
    if (!insteadName.isEmpty())
        text += u'\n' + tr("It will offer to write %1 instead.").arg(insteadName);
    return text;
}

QString describePlan(const repack::SavePlan& plan, const ModelSnapshot& current)
{
    auto tr = [](const char* text, int n = -1) {
        return QCoreApplication::translate("SavePreview", text, nullptr, n);
    };
    // The Before / after tab's classification (core's plan diff), so both say the same.
    const repack::PlanDiff diff = repack::diffPlan(tensorsBefore(current), current.layouts, plan);
    size_t externalCount = 0;
    for (const repack::PlannedTensor& p : plan.tensors)
        externalCount += p.external;
    size_t within = 0, across = 0; // Moved: in the same file, or into another existing one
    for (const repack::PlanDiffTensor& t : diff.tensors)
        if (t.kind == repack::ChangeKind::Moved)
            (t.before.location == t.after.location ? within : across)++;
    const size_t newFile = diff.count(repack::ChangeKind::NewFile);
    const size_t toExternal = diff.count(repack::ChangeKind::ToExternal);
    const size_t toInline = diff.count(repack::ChangeKind::ToInline);
    QStringList lines;
    if (toExternal == 0 && toInline == 0)
        lines << tr("No tensor changes storage.");
    if (newFile)
        lines << tr("%n external tensor(s) move to a new data file.", int(newFile));
    if (across)
        lines << tr("%n external tensor(s) move to another existing data file.", int(across));
    if (within)
        lines << tr("%n external tensor(s) move within their data files.", int(within));
    if (toExternal)
        lines << tr("%n tensor(s) move to external data", int(toExternal)) + QStringLiteral(" (")
                + formatBytes(diff.toExternalBytes) + u')';
    if (toInline)
        lines << tr("%n tensor(s) come back inline", int(toInline)) + QStringLiteral(" (")
                + formatBytes(diff.toInlineBytes) + u')';
    QStringList files;
    for (size_t f = 0; f < plan.files.size(); ++f)
        files << QString::fromStdString(plan.files[f]) + QStringLiteral(": ")
                + formatBytes(f < plan.fileBytes.size() ? plan.fileBytes[f] : 0);
    lines << tr("After saving: %n external tensor(s)", int(externalCount)) + QStringLiteral(", ")
            + formatBytes(plan.externalBytes) + tr(" external, ") + formatBytes(plan.inlineBytes)
            + tr(" inline.");
    if (!files.isEmpty())
        lines << files.join(u'\n');
    // Bytes no tensor reads (not alignment padding): what compacting a file takes away, or
    // what the save leaves (a tensor moved out of a file whose others keep their place).
    for (const repack::PlanDiffFile& f : diff.files) {
        const QString name = QString::fromStdString(f.location);
        if (f.after && f.orphanedAfter)
            lines << tr("%1 keeps %2 orphaned (no tensor reads them): compact it to close the "
                        "gaps.")
                         .arg(name, formatBytes(f.orphanedAfter));
        else if (f.before && f.after && f.orphanedBefore)
            lines << tr("%1: its %2 orphaned go (laid out again without gaps).")
                         .arg(name, formatBytes(f.orphanedBefore));
    }
    return lines.join(u'\n');
}

std::vector<repack::FileLayout> fileTotals(const ModelSnapshot& snapshot)
{
    std::vector<repack::FileLayout> files;
    files.reserve(snapshot.layouts.size());
    for (const repack::FileLayout& layout : snapshot.layouts) {
        repack::FileLayout& file = files.emplace_back();
        file.location = layout.location;
        file.bytes = layout.bytes;
        file.paddingBytes = layout.paddingBytes;
        file.orphanedBytes = layout.orphanedBytes;
    }
    return files;
}

struct BeforeAfterPanel::Input {
    ModelSnapshot current;
    repack::SavePlan plan;
};

BeforeAfterPanel::BeforeAfterPanel(QWidget* parent)
    : QWidget(parent)
    , m_view(new LayoutDiffView(this))
    , m_message(new QLabel(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_message->setContentsMargins(6, 2, 6, 2);
    // A long reason ("Cannot save /a/long/path: ...") wraps, and never widens the window: what
    // does not fit is in the tooltip.
    m_message->setWordWrap(true);
    m_message->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->hide();
    layout->addWidget(m_message);
    layout->addWidget(m_view, 1);
}

BeforeAfterPanel::~BeforeAfterPanel()
{
    m_jobs.waitForFinished();
}

void BeforeAfterPanel::setPlan(const ModelSnapshot& current, const repack::SavePlan& plan)
{
    m_message->hide();
    auto input = std::make_shared<Input>();
    input->current = current;
    input->plan = plan;
    if (m_pending)
        releaseInBackground(std::move(m_pending));
    m_pending = std::move(input);
    if (isVisible() && !m_jobs.isRunning())
        build();
}

void BeforeAfterPanel::clear(const QString& reason)
{
    if (m_pending)
        releaseInBackground(std::move(m_pending));
    m_pending.reset();
    m_jobs.reset(); // a diff still being built is of an older plan
    m_view->setDiff(nullptr);
    m_message->setText(reason);
    m_message->setToolTip(reason);
    m_message->setVisible(!reason.isEmpty());
}

bool BeforeAfterPanel::isPending() const
{
    return m_jobs.isRunning() || m_pending;
}

void BeforeAfterPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_pending && !m_jobs.isRunning())
        build();
}

void BeforeAfterPanel::build()
{
    m_jobs.start(
        [input = std::exchange(m_pending, nullptr)]() -> std::shared_ptr<const LayoutDiff> {
            return std::make_shared<const LayoutDiff>(beforeAfterDiff(input->current, input->plan));
        },
        [this](std::shared_ptr<const LayoutDiff> diff) {
            m_view->setDiff(std::move(diff));
            if (m_pending && isVisible())
                build();
            else
                Q_EMIT updated();
        });
}

} // namespace ui
