#include "save_preview.h"

#include "byte_format.h"
#include "model_snapshot.h"

#include "core/save_plan.h"

#include <QCoreApplication>
#include <QStringList>

namespace ui {

QString describePlan(const repack::SavePlan& plan, const ModelSnapshot& current)
{
    auto tr = [](const char* text, int n = -1) {
        return QCoreApplication::translate("SavePreview", text, nullptr, n);
    };
    uint64_t toExternalBytes = 0;
    uint64_t toInlineBytes = 0;
    size_t externalCount = 0;
    for (size_t i = 0; i < plan.tensors.size() && i < size_t(current.tensors.size()); ++i) {
        const bool now = current.tensors[qsizetype(i)].external;
        const bool after = plan.tensors[i].external;
        externalCount += after;
        if (after && !now)
            toExternalBytes += current.tensors[qsizetype(i)].bytes;
        if (!after && now)
            toInlineBytes += current.tensors[qsizetype(i)].bytes;
    }
    QStringList lines;
    if (plan.movedToExternal == 0 && plan.movedToInline == 0)
        lines << tr("No tensor changes storage.");
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

} // namespace ui
