#include "compact_action.h"

#include "ui/util/byte_format.h"

#include "core/plan/file_layout.h"

#include <QAction>
#include <QCoreApplication>
#include <QMenu>

namespace ui {

namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("CompactAction", text);
}

QString orphanedText(const repack::FileLayout& file)
{
    return file.orphanedBytes ? tr("%1 orphaned").arg(formatBytes(file.orphanedBytes))
                              : tr("no orphaned bytes");
}

} // namespace

QAction* addCompactAction(QMenu* menu, const repack::FileLayout& file)
{
    const QString location = QString::fromStdString(file.location);
    QAction* action = menu->addAction(tr("Compact %1 (%2)").arg(location, orphanedText(file)));
    action->setObjectName(QStringLiteral("compactFileAction"));
    action->setData(location);
    // Never greyed out by how the gaps are counted: that depends on an alignment the offsets
    // cannot prove. A compaction that changes nothing says so and writes nothing.
    return action;
}

QList<std::pair<QString, QString>> compactOffers(const std::vector<repack::FileLayout>& layouts)
{
    QList<std::pair<QString, QString>> offers;
    for (const repack::FileLayout& file : layouts)
        offers.append({QString::fromStdString(file.location), orphanedText(file)});
    return offers;
}

QStringList compactedInACopy(const std::vector<repack::FileLayout>& layouts)
{
    QStringList files;
    for (const repack::FileLayout& file : layouts)
        if (!file.headerBytes)
            files << QString::fromStdString(file.location);
    return files;
}

} // namespace ui
