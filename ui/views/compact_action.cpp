#include "compact_action.h"

#include "ui/util/byte_format.h"

#include "core/inspect/file_layout.h"

#include <QAction>
#include <QCoreApplication>
#include <QMenu>

namespace ui {

QAction* addCompactAction(QMenu* menu, const repack::FileLayout& file)
{
    auto tr = [](const char* text) { return QCoreApplication::translate("CompactAction", text); };
    const QString location = QString::fromStdString(file.location);
    QAction* action = menu->addAction(file.orphanedBytes
            ? tr("Compact %1 (%2 orphaned)").arg(location, formatBytes(file.orphanedBytes))
            : tr("Compact %1 (no orphaned bytes)").arg(location));
    action->setObjectName(QStringLiteral("compactFileAction"));
    action->setData(location);
    action->setEnabled(file.orphanedBytes != 0);
    return action;
}

} // namespace ui
