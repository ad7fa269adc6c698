#include "settings_store.h"

#include <QCoreApplication>
#include <QMutex>
#include <QSettings>
#include <QThreadPool>

namespace ui {
namespace {

struct Store {
    QMutex mutex;
    QVariantMap values;
};

Store& store()
{
    static Store* s = [] {
        auto* created = new Store;
        const QSettings settings;
        for (const QString& key : settings.allKeys())
            created->values.insert(key, settings.value(key));
        return created;
    }();
    return *s;
}

// One thread, so writes apply in order. A child of the application: destroying it waits for
// the queued writes before Qt's own globals go away.
QThreadPool* settingsThread()
{
    static QThreadPool* pool = [] {
        auto* created = new QThreadPool(QCoreApplication::instance());
        created->setMaxThreadCount(1);
        return created;
    }();
    return pool;
}

void storeInBackground(std::function<void(QSettings&)> write)
{
    // The names are read here: the application object may be gone when the write runs.
    settingsThread()->start(
        [write = std::move(write), organization = QCoreApplication::organizationName(),
            application = QCoreApplication::applicationName()] {
            QSettings settings(organization, application);
            write(settings);
        });
}

} // namespace

QVariant setting(const QString& key, const QVariant& fallback)
{
    Store& s = store();
    QMutexLocker lock(&s.mutex);
    return s.values.value(key, fallback);
}

QVariantMap settingsIn(const QString& group)
{
    Store& s = store();
    QMutexLocker lock(&s.mutex);
    QVariantMap values;
    const QString prefix = group + u'/';
    for (auto it = s.values.lowerBound(prefix);
         it != s.values.cend() && it.key().startsWith(prefix); ++it)
        values.insert(it.key(), it.value());
    return values;
}

void writeSettings(const QVariantMap& values)
{
    Store& s = store();
    {
        QMutexLocker lock(&s.mutex);
        s.values.insert(values);
    }
    storeInBackground([values](QSettings& settings) {
        for (auto it = values.cbegin(); it != values.cend(); ++it)
            settings.setValue(it.key(), it.value());
    });
}

void writeSetting(const QString& key, const QVariant& value, std::function<void(QSettings&)> write)
{
    Store& s = store();
    {
        QMutexLocker lock(&s.mutex);
        s.values.insert(key, value);
    }
    storeInBackground(std::move(write));
}

void waitForSettingsWritten()
{
    settingsThread()->waitForDone();
}

} // namespace ui
