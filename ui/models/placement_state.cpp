#include "placement_state.h"

#include "ui/util/data_file_name.h"

#include "core/file_names.h"

#include <QDir>
#include <QFileInfo>
#include <QUndoCommand>
#include <QUndoStack>

#include <algorithm>
#include <filesystem>
#include <utility>

namespace ui {
namespace {

QString keyOf(const repack::TensorPlacement& p)
{
    switch (p.kind) {
    case repack::Placement::Auto:
        return {};
    case repack::Placement::Inline:
        return QStringLiteral("i");
    case repack::Placement::External:
        return u'e' + QString::fromStdString(p.location);
    }
    return {};
}

} // namespace

// One plan edit: the pins of `tensors` before and after it.
class PinCommand : public QUndoCommand {
public:
    PinCommand(PlacementState* state, QList<int> tensors,
        std::vector<repack::TensorPlacement> before, std::vector<repack::TensorPlacement> after,
        const QString& text)
        : QUndoCommand(text)
        , m_state(state)
        , m_tensors(std::move(tensors))
        , m_before(std::move(before))
        , m_after(std::move(after))
    {
    }
    void redo() override
    {
        m_state->apply(m_tensors, m_after);
        if (std::exchange(m_done, true)) // not the edit as it is made
            Q_EMIT m_state->revisited(m_tensors, false);
    }
    void undo() override
    {
        m_state->apply(m_tensors, m_before);
        Q_EMIT m_state->revisited(m_tensors, true);
    }

private:
    PlacementState* m_state;
    QList<int> m_tensors;
    std::vector<repack::TensorPlacement> m_before;
    std::vector<repack::TensorPlacement> m_after;
    bool m_done = false;
};

PlacementState::PlacementState(QObject* parent)
    : QObject(parent)
    , m_undo(new QUndoStack(this))
{
}

PlacementState::~PlacementState() = default;

void PlacementState::setSnapshot(const ModelSnapshot& snapshot)
{
    m_undo->clear();
    m_queue.clear(); // edits of the model shown before
    m_checks.reset();
    ++m_generation;
    QList<int> changed;
    for (int t = 0; t < tensorCount(); ++t)
        if (isPinned(t))
            changed << t;
    m_modelPath = snapshot.path;
    m_rows = snapshot.tensors;
    m_pins.assign(size_t(snapshot.tensors.size()), {});
    m_counts.clear();
    m_pinned = 0;
    m_lastRefusal.clear();
    changed.erase(std::remove_if(
                      changed.begin(), changed.end(), [this](int t) { return t >= tensorCount(); }),
        changed.end());
    if (!changed.isEmpty())
        Q_EMIT pinsChanged(changed);
}

int PlacementState::pinnedCount(const repack::TensorPlacement& destination) const
{
    return m_counts.value(keyOf(destination));
}

QStringList PlacementState::pinnedFiles() const
{
    QStringList files;
    for (auto it = m_counts.cbegin(); it != m_counts.cend(); ++it)
        if (it.value() > 0 && it.key().size() > 1 && it.key().front() == u'e')
            files << it.key().mid(1);
    files.sort();
    return files;
}

bool PlacementState::staysPut(int tensor, const repack::TensorPlacement& destination) const
{
    if (tensor < 0 || tensor >= m_rows.size())
        return false;
    const TensorRow& row = m_rows[tensor];
    switch (destination.kind) {
    case repack::Placement::Auto:
        return true;
    case repack::Placement::Inline:
        return !row.external;
    case repack::Placement::External:
        // The save's data file (no name) may be another file by the time it is saved.
        return row.external && !destination.location.empty()
            && std::filesystem::path(destination.location).lexically_normal()
            == std::filesystem::path(row.storage.toStdString()).lexically_normal()
            && (!destination.offset || *destination.offset == row.offset);
    }
    return false;
}

int PlacementState::movingCount() const
{
    int moving = 0;
    if (m_pinned)
        for (int t = 0; t < tensorCount(); ++t)
            moving += isPinned(t) && !staysPut(t, m_pins[size_t(t)]);
    return moving;
}

std::vector<repack::TensorPlacement> PlacementState::plan() const
{
    if (!m_pinned)
        return {};
    std::vector<repack::TensorPlacement> plan = m_pins;
    for (size_t t = 0; t < plan.size(); ++t)
        if (repack::TensorPlacement& pin = plan[t];
            pin.kind == repack::Placement::External && !pin.offset && staysPut(int(t), pin))
            pin.offset = m_rows[qsizetype(t)].offset;
    return plan;
}

void PlacementState::apply(
    const QList<int>& tensors, const std::vector<repack::TensorPlacement>& values)
{
    for (qsizetype i = 0; i < tensors.size(); ++i) {
        repack::TensorPlacement& pin = m_pins[size_t(tensors[i])];
        const repack::TensorPlacement& value = values.size() == 1 ? values[0] : values[size_t(i)];
        if (pin.kind != repack::Placement::Auto) {
            --m_pinned;
            if (--m_counts[keyOf(pin)] == 0)
                m_counts.remove(keyOf(pin));
        }
        pin = value;
        if (pin.kind != repack::Placement::Auto) {
            ++m_pinned;
            ++m_counts[keyOf(pin)];
        }
    }
    ++m_generation;
    Q_EMIT pinsChanged(tensors);
}

void PlacementState::push(
    const QList<int>& tensors, std::vector<repack::TensorPlacement> after, const QString& text)
{
    std::vector<repack::TensorPlacement> before;
    before.reserve(size_t(tensors.size()));
    for (int t : tensors)
        before.push_back(m_pins[size_t(t)]);
    m_undo->push(new PinCommand(this, tensors, std::move(before), std::move(after), text));
}

QString PlacementState::describe(const repack::TensorPlacement& destination)
{
    switch (destination.kind) {
    case repack::Placement::Auto:
        return {};
    case repack::Placement::Inline:
        return tr("inline");
    case repack::Placement::External:
        return destination.location.empty() ? tr("save's data file")
                                            : QString::fromStdString(destination.location);
    }
    return {};
}

QString PlacementState::fileNameError(const QString& name) const
{
    if (name.trimmed().isEmpty())
        return tr("A data file needs a name.");
    if (QString error = dataFileNameError(name); !error.isEmpty())
        return error;
    const QFileInfo model(m_modelPath);
    const QString target = QDir::cleanPath(model.absoluteDir().absoluteFilePath(name));
    const QFileInfo file(target);
    if (target == QDir::cleanPath(model.absoluteFilePath())
        || (file.exists() && file.canonicalFilePath() == model.canonicalFilePath()))
        return tr("\"%1\" is the model file itself.").arg(name);
    if (file.isDir())
        return tr("\"%1\" is a folder.").arg(name);
    if (repack::isModelName(QFileInfo(name).fileName().toStdString()))
        return tr("\"%1\" would be taken for a model file.").arg(name);
    return {};
}

QString PlacementState::refusalFor(
    const QList<int>& tensors, const repack::TensorPlacement& destination) const
{
    const QString where = describe(destination);
    for (int t : tensors)
        if (t < 0 || t >= tensorCount())
            return tr("These tensors are not the open model's.");
    if (destination.kind == repack::Placement::External) {
        QStringList strings;
        for (int t : tensors)
            if (m_rows[t].dtype == QStringLiteral("STRING"))
                strings << m_rows[t].name;
        if (!strings.isEmpty())
            return tr("Cannot move to %1: STRING tensors cannot be stored in a data file (%2).")
                .arg(where,
                    strings.size() > 3 ? strings.mid(0, 3).join(QStringLiteral(", "))
                            + tr(" and %n more", nullptr, int(strings.size() - 3))
                                       : strings.join(QStringLiteral(", ")));
        if (!destination.location.empty()) {
            const QString error = fileNameError(QString::fromStdString(destination.location));
            if (!error.isEmpty())
                return tr("Cannot move to %1: %2").arg(where, error);
        }
    }
    return {};
}

bool PlacementState::refuse(const QString& reason)
{
    m_lastRefusal = reason;
    if (!reason.isEmpty())
        Q_EMIT refused(reason);
    return reason.isEmpty();
}

bool PlacementState::pinTo(const QList<int>& tensors, const repack::TensorPlacement& destination)
{
    if (!refuse(refusalFor(tensors, destination)))
        return false;
    PendingEdit edit;
    edit.tensors = tensors;
    edit.destination = destination;
    enqueue(std::move(edit));
    return true;
}

void PlacementState::resetPins(const QList<int>& tensors)
{
    QList<int> changed;
    for (int t : tensors)
        if (isPinned(t))
            changed << t;
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    if (!changed.isEmpty())
        push(changed, {repack::TensorPlacement{}},
            tr("Reset %n pin(s)", nullptr, int(changed.size())));
}

void PlacementState::resetAll()
{
    QList<int> pinned;
    for (int t = 0; t < tensorCount(); ++t)
        if (isPinned(t))
            pinned << t;
    if (!pinned.isEmpty())
        push(pinned, {repack::TensorPlacement{}}, tr("Reset all pins"));
}

void PlacementState::replaceAll(const std::vector<repack::TensorPlacement>& plan,
    const QString& text, std::function<void()> applied)
{
    refuse({});
    PendingEdit edit;
    edit.whole = true;
    edit.plan = plan;
    edit.text = text;
    edit.applied = std::move(applied);
    enqueue(std::move(edit));
}

void PlacementState::waitForChecks()
{
    m_checks.waitForFinished();
}

void PlacementState::enqueue(PendingEdit edit)
{
    m_queue.push_back(std::move(edit));
    checkNext();
}

std::vector<repack::TensorPlacement> PlacementState::pinsAfter(const PendingEdit& edit) const
{
    if (edit.whole) {
        std::vector<repack::TensorPlacement> next(m_pins.size());
        for (size_t t = 0; t < next.size() && t < edit.plan.size(); ++t)
            next[t] = edit.plan[t];
        return next;
    }
    std::vector<repack::TensorPlacement> next = m_pins;
    for (int t : edit.tensors)
        next[size_t(t)] = edit.destination;
    return next;
}

void PlacementState::checkNext()
{
    if (m_queue.empty() || m_checks.isRunning())
        return;
    const PlanCheck check = m_makeCheck ? m_makeCheck() : PlanCheck();
    if (!check) {
        land({});
        return;
    }
    const quint64 generation = m_generation;
    m_checks.start(
        [check, next = pinsAfter(m_queue.front()), now = m_pins] {
            const QString error = check(next);
            // A plan that fails already for another reason (a problem of the model, an unusable
            // data file name in the panel) is not this edit's fault.
            return error.isEmpty() || error == check(now) ? QString() : error;
        },
        [this, generation](const QString& error) {
            if (generation == m_generation)
                land(error);
            else
                checkNext(); // the pins changed meanwhile (undo, redo): check against them
        });
}

void PlacementState::land(const QString& error)
{
    PendingEdit edit = std::move(m_queue.front());
    m_queue.pop_front();
    // The last edit to land says whether it was refused (an earlier one queued may have been).
    if (!error.isEmpty()) {
        refuse(edit.whole
                ? tr("Cannot use this plan: %1").arg(error)
                : tr("Cannot move %n tensor(s) to %1: %2", nullptr, int(edit.tensors.size()))
                      .arg(describe(edit.destination), error));
    } else if (edit.whole) {
        refuse({});
        QList<int> changed;
        std::vector<repack::TensorPlacement> after;
        for (int t = 0; t < tensorCount(); ++t) {
            const repack::TensorPlacement value
                = size_t(t) < edit.plan.size() ? edit.plan[size_t(t)] : repack::TensorPlacement{};
            if (!(value == m_pins[size_t(t)])) {
                changed << t;
                after.push_back(value);
            }
        }
        if (!changed.isEmpty())
            push(changed, std::move(after), edit.text);
        if (edit.applied)
            edit.applied();
    } else {
        refuse({});
        QList<int> changed;
        for (int t : edit.tensors)
            if (!(m_pins[size_t(t)] == edit.destination))
                changed << t;
        std::sort(changed.begin(), changed.end());
        changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
        if (!changed.isEmpty())
            push(changed, {edit.destination},
                tr("Move %n tensor(s) to %1", nullptr, int(changed.size()))
                    .arg(describe(edit.destination)));
    }
    checkNext();
}

} // namespace ui
