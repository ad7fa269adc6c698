#include "model_options.h"

#include "ui/util/settings_store.h"

#include <QDateTime>
#include <QFileInfo>
#include <QSettings>

#include <algorithm>
#include <vector>

namespace ui {

namespace {

const QString kKey = QStringLiteral("modelOptions");
const QString kSavedAt = QStringLiteral("savedAt");

QString keyOf(const QString& path)
{
    return QFileInfo(path).absoluteFilePath();
}

// `all` with `values` for `path`, the oldest entries dropped past the limit.
QVariantMap withEntry(QVariantMap all, const QString& path, QVariantMap values)
{
    values.insert(kSavedAt, QDateTime::currentMSecsSinceEpoch());
    all.insert(keyOf(path), values);
    if (all.size() > kRememberedModels) {
        std::vector<std::pair<qint64, QString>> byAge;
        for (auto it = all.cbegin(); it != all.cend(); ++it)
            byAge.emplace_back(it.value().toMap().value(kSavedAt).toLongLong(), it.key());
        std::sort(byAge.begin(), byAge.end());
        for (size_t i = 0; i + kRememberedModels < byAge.size(); ++i)
            all.remove(byAge[i].second);
    }
    return all;
}

} // namespace

QVariantMap optionsSavedWith(const QString& path)
{
    QVariantMap values = setting(kKey).toMap().value(keyOf(path)).toMap();
    values.remove(kSavedAt);
    return values;
}

void rememberOptions(const QString& path, const QVariantMap& values)
{
    const QVariantMap all = withEntry(setting(kKey).toMap(), path, values);
    // Merged with what other windows or processes stored meanwhile.
    writeSetting(kKey, all, [path, values](QSettings& settings) {
        settings.setValue(kKey, withEntry(settings.value(kKey).toMap(), path, values));
    });
}

} // namespace ui
