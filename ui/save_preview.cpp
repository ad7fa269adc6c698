#include "save_preview.h"

#include "background.h"
#include "byte_format.h"
#include "layout_diff_view.h"
#include "model_snapshot.h"

#include "core/plan/save_plan.h"

#include <QCoreApplication>
#include <QLabel>
#include <QStringList>
#include <QVBoxLayout>

namespace ui {

QString describePlan(const repack::SavePlan& plan, const ModelSnapshot& current)
{
    auto tr = [](const char* text, int n = -1) {
        return QCoreApplication::translate("SavePreview", text, nullptr, n);
    };
    uint64_t toExternalBytes = 0;
    uint64_t toInlineBytes = 0;
    size_t externalCount = 0;
    size_t moving = 0; // external before and after, at another file or offset
    for (size_t i = 0; i < plan.tensors.size() && i < size_t(current.tensors.size()); ++i) {
        const TensorRow& row = current.tensors[qsizetype(i)];
        const bool now = row.external;
        const bool after = plan.tensors[i].external;
        externalCount += after;
        if (now && after
            && (row.offset != plan.tensors[i].offset
                || row.storage != QString::fromStdString(plan.files[size_t(plan.tensors[i].file)])))
            ++moving;
        if (after && !now)
            toExternalBytes += current.tensors[qsizetype(i)].bytes;
        if (!after && now)
            toInlineBytes += current.tensors[qsizetype(i)].bytes;
    }
    QStringList lines;
    if (plan.movedToExternal == 0 && plan.movedToInline == 0)
        lines << (moving ? tr("No tensor changes storage; %n tensor(s) move within their data "
                              "files.",
                      int(moving))
                         : tr("No tensor changes storage."));
    else if (moving)
        lines << tr("%n external tensor(s) move within their data files.", int(moving));
    if (plan.movedToExternal)
        lines << tr("%n tensor(s) move to external data", int(plan.movedToExternal))
                + QStringLiteral(" (") + formatBytes(toExternalBytes) + u')';
    if (plan.movedToInline)
        lines << tr("%n tensor(s) come back inline", int(plan.movedToInline)) + QStringLiteral(" (")
                + formatBytes(toInlineBytes) + u')';
    QStringList files;
    for (size_t f = 0; f < plan.files.size(); ++f)
        files << QString::fromStdString(plan.files[f]) + QStringLiteral(": ")
                + formatBytes(f < plan.fileBytes.size() ? plan.fileBytes[f] : 0);
    lines << tr("After saving: %n external tensor(s)", int(externalCount)) + QStringLiteral(", ")
            + formatBytes(plan.externalBytes) + tr(" external, ") + formatBytes(plan.inlineBytes)
            + tr(" inline.");
    if (!files.isEmpty())
        lines << files.join(u'\n');
    return lines.join(u'\n');
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
