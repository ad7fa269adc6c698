#include "recent_files.h"

#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace ui {
namespace {

constexpr int kMaxFiles = 10;
const QString kKey = QStringLiteral("recentFiles");

} // namespace

RecentFiles::RecentFiles(QMenu* menu, QObject* parent)
    : QObject(parent)
    , m_menu(menu)
    , m_files(QSettings().value(kKey).toStringList())
{
    rebuildMenu();
}

void RecentFiles::add(const QString& path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    // Other windows may have added files since we read the list.
    m_files = QSettings().value(kKey).toStringList();
    m_files.removeAll(absolute);
    m_files.prepend(absolute);
    while (m_files.size() > kMaxFiles)
        m_files.removeLast();
    QSettings().setValue(kKey, m_files);
    rebuildMenu();
}

void RecentFiles::rebuildMenu()
{
    m_menu->clear();
    for (const QString& file : std::as_const(m_files)) {
        QAction* action = m_menu->addAction(QDir::toNativeSeparators(file));
        connect(action, &QAction::triggered, this, [this, file] { Q_EMIT openRequested(file); });
    }
    m_menu->setEnabled(!m_files.isEmpty());
    if (!m_files.isEmpty()) {
        m_menu->addSeparator();
        m_menu->addAction(tr("Clear List"), this, [this] {
            m_files.clear();
            QSettings().setValue(kKey, m_files);
            rebuildMenu();
        });
    }
}

} // namespace ui
