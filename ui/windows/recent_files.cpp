#include "recent_files.h"

#include "ui/util/display_name.h"
#include "ui/util/settings_store.h"

#include <QDir>
#include <QFileInfo>
#include <QFontMetrics>
#include <QMenu>
#include <QSettings>

namespace ui {
namespace {

constexpr int kMaxFiles = 10;
// An entry is at most this many average characters wide; its folder is elided in the middle.
constexpr int kEntryCharacters = 72;
const QString kKey = QStringLiteral("recentFiles");

void addTo(QStringList& files, const QString& path)
{
    files.removeAll(path);
    files.prepend(path);
    while (files.size() > kMaxFiles)
        files.removeLast();
}

} // namespace

RecentFiles::RecentFiles(QMenu* menu, QObject* parent)
    : QObject(parent)
    , m_menu(menu)
    , m_files(setting(kKey).toStringList())
{
    m_menu->setToolTipsVisible(true);
    rebuildMenu();
    // Other windows may have added files since.
    connect(m_menu, &QMenu::aboutToShow, this, [this] {
        const QStringList files = setting(kKey).toStringList();
        if (files != m_files) {
            m_files = files;
            rebuildMenu();
        }
    });
}

void RecentFiles::add(const QString& path)
{
    // A URL is remembered without what may be secret (a signed URL's query).
    const QString absolute
        = isRemoteName(path) ? shownName(path) : QFileInfo(path).absoluteFilePath();
    m_files = setting(kKey).toStringList();
    addTo(m_files, absolute);
    // Stored merged with the list on disk, which other processes may have changed.
    writeSetting(kKey, m_files, [absolute](QSettings& settings) {
        QStringList files = settings.value(kKey).toStringList();
        addTo(files, absolute);
        settings.setValue(kKey, files);
    });
    rebuildMenu();
}

void RecentFiles::rebuildMenu()
{
    m_menu->clear();
    // Named as the titles name them, each with its folder (ui/util/display_name.h); the whole path
    // in its tooltip.
    const QFontMetrics metrics(m_menu->font());
    const int width = metrics.averageCharWidth() * kEntryCharacters;
    for (const QString& file : std::as_const(m_files)) {
        QAction* action = m_menu->addAction(displayName(file, metrics, width));
        action->setToolTip(isRemoteName(file) ? file : QDir::toNativeSeparators(file));
        connect(action, &QAction::triggered, this, [this, file] { Q_EMIT openRequested(file); });
    }
    m_menu->setEnabled(!m_files.isEmpty());
    if (!m_files.isEmpty()) {
        m_menu->addSeparator();
        m_menu->addAction(tr("Clear List"), this, [this] {
            m_files.clear();
            writeSettings({{kKey, QStringList()}});
            rebuildMenu();
        });
    }
}

} // namespace ui
