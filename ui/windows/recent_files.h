// The File > Open Recent menu, remembered in QSettings: paths, and URLs without their secrets.
#pragma once

#include <QObject>
#include <QStringList>

class QMenu;

namespace ui {

class RecentFiles : public QObject {
    Q_OBJECT
public:
    explicit RecentFiles(QMenu* menu, QObject* parent = nullptr);

    void add(const QString& path);
    QStringList files() const { return m_files; }

Q_SIGNALS:
    void openRequested(const QString& path);

private:
    void rebuildMenu();

    QMenu* m_menu;
    QStringList m_files;
};

} // namespace ui
