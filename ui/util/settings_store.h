// The application's settings (QSettings), read once per process and then kept in memory here.
// QSettings writes its file through QSaveFile, which fsyncs, and holds a lock meanwhile that
// every QSettings of the same file waits for, even to read; right after a save has written a
// GiB, that takes seconds. So the GUI thread reads only this copy, and writes go to disk on one
// background thread, in the order they were made.
#pragma once

#include <QVariantMap>

#include <functional>

class QSettings;

namespace ui {

// From the in-memory copy, read from QSettings on first use.
QVariant setting(const QString& key, const QVariant& fallback = {});
// Every key in `group` (e.g. "repack/threshold" for "repack") with its value.
QVariantMap settingsIn(const QString& group);
// Sets each key of `values` (e.g. "repack/threshold") in memory now, in QSettings soon.
void writeSettings(const QVariantMap& values);
// Sets `key` in memory now; `store` puts it into QSettings on the settings thread (for a value
// merged with what other processes stored meanwhile).
void writeSetting(const QString& key, const QVariant& value, std::function<void(QSettings&)> store);
// Blocks until every write so far is in QSettings and synced.
void waitForSettingsWritten();

} // namespace ui
