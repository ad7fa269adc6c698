#include "model_holder.h"

#include <QFileInfo>

#include <algorithm>
#include <vector>

namespace ui {
namespace {

std::vector<ModelHolder*>& holders()
{
    static std::vector<ModelHolder*> all;
    return all;
}

QString canonical(const QString& path)
{
    const QString real = QFileInfo(path).canonicalFilePath();
    return real.isEmpty() ? QFileInfo(path).absoluteFilePath() : real;
}

} // namespace

ModelHolder::ModelHolder(QObject* self)
    : m_self(self)
{
    holders().push_back(this);
}

ModelHolder::~ModelHolder()
{
    auto& all = holders();
    all.erase(std::remove(all.begin(), all.end(), this), all.end());
}

QList<ModelHolder*> ModelHolder::showing(const QStringList& paths)
{
    QStringList wanted;
    for (const QString& path : paths)
        wanted << canonical(path);
    QList<ModelHolder*> out;
    for (ModelHolder* holder : holders()) {
        const QString held = holder->heldPath();
        if (!held.isEmpty() && wanted.contains(canonical(held)))
            out << holder;
    }
    return out;
}

} // namespace ui
