#include "repack_panel.h"

#include "size_edit.h"
#include "ui/util/data_file_name.h"

#include "core/file_names.h"
#include "core/plan/save_plan.h"
#include "core/plan/targets.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPointer>
#include <QTimer>
#include <QToolButton>
#include <QUndoStack>

namespace ui {

// One edit of the panel's fields, undoable on the stack the pins share. Typing into one field
// is one edit: consecutive changes of the same text or size field merge.
class SettingsEdit : public QUndoCommand {
public:
    SettingsEdit(RepackPanel* panel, QVariantMap before, QVariantMap after, const char* key,
        const QString& text, bool typed)
        : QUndoCommand(text)
        , m_panel(panel)
        , m_before(std::move(before))
        , m_after(std::move(after))
        , m_key(key)
        , m_id(typed ? int(qHash(QLatin1StringView(key)) & 0x3fffffff) + 1000 : -1)
    {
    }
    int id() const override { return m_id; }
    bool mergeWith(const QUndoCommand* other) override
    {
        const auto* next = static_cast<const SettingsEdit*>(other);
        if (next->m_key != m_key)
            return false;
        m_after = next->m_after;
        return true;
    }
    // The first redo is the edit the user just made: the fields show it already.
    void redo() override
    {
        if (std::exchange(m_done, true))
            m_panel->revisit(m_after, m_key, false);
    }
    void undo() override { m_panel->revisit(m_before, m_key, true); }

private:
    RepackPanel* m_panel;
    QVariantMap m_before;
    QVariantMap m_after;
    const char* m_key;
    int m_id;
    bool m_done = false;
};

namespace {

// Draws the eye to a field an undo or redo just changed, for a moment.
void flash(QWidget* widget)
{
    static const QString kFlash = QStringLiteral("background-color: #fce8a4;");
    if (!widget || widget->styleSheet() == kFlash)
        return;
    const QString before = widget->styleSheet();
    widget->setStyleSheet(kFlash);
    QTimer::singleShot(1200, widget, [widget = QPointer<QWidget>(widget), before] {
        if (widget && widget->styleSheet() == kFlash)
            widget->setStyleSheet(before);
    });
}

} // namespace

RepackPanel::RepackPanel(QWidget* parent)
    : QWidget(parent)
    , m_keep(new QCheckBox(tr("&Keep tensors where they are"), this))
    , m_compact(new QToolButton(this))
    , m_target(new QComboBox(this))
    , m_format(new QComboBox(this))
    , m_threshold(new SizeEdit(this))
    , m_dataFile(new QLineEdit(this))
    , m_dataFileError(new QLabel(this))
    , m_alignment(new QComboBox(this))
    , m_alignThreshold(new SizeEdit(this))
    , m_order(new QComboBox(this))
    , m_attributes(new QCheckBox(tr("Attribute tensors may go external"), this))
    , m_shardSize(new SizeEdit(this))
    , m_checksum(new QCheckBox(tr("Write SHA-1 checksums"), this))
    , m_removeUnused(new QCheckBox(tr("Remove data files no longer used"), this))
    , m_preview(new QLabel(this))
    , m_buttons(new QWidget(this))
{
    setUpFields();
    layOutRows();
    connectEdits();
    m_committed = m_baseline = settingValues();
}

std::vector<RepackPanel::Field> RepackPanel::fields() const
{
    return {
        {"keep", tr("Keep tensors where they are"), m_keep, false},
        {"compact", tr("Compact"), m_compact, false},
        {"target", tr("Target"), m_target, true},
        {"threshold", tr("Threshold"), m_threshold, true},
        {"format", tr("Format"), m_format, true},
        {"dataFile", tr("Data file"), m_dataFile, true},
        {"alignment", tr("Alignment"), m_alignment, true},
        {"alignThreshold", tr("Align from"), m_alignThreshold, true},
        {"order", tr("Order"), m_order, true},
        {"attributes", tr("Attribute tensors may go external"), m_attributes, true},
        {"shardSize", tr("Shard size"), m_shardSize, true},
        {"checksum", tr("Write SHA-1 checksums"), m_checksum, false},
        {"removeUnused", tr("Remove data files no longer used"), m_removeUnused, false},
    };
}

void RepackPanel::edited(const char* key)
{
    if (m_restoring)
        return;
    const std::vector<Field> all = fields();
    const auto field = std::find_if(
        all.begin(), all.end(), [key](const Field& f) { return qstrcmp(f.key, key) == 0; });
    QVariantMap now = settingValues();
    if (now == m_committed)
        return; // set to what it was (a size field says so even then)
    // Asking for another layout is asking for the rule: the tensors no longer keep their place.
    if (field != all.end() && field->layout && m_keep->isChecked()) {
        const QSignalBlocker block(m_keep);
        m_keep->setChecked(false);
        now = settingValues();
    }
    const QString label = field != all.end() ? field->label : QString::fromLatin1(key);
    QWidget* widget = field != all.end() ? field->widget : nullptr;
    const bool typed = qobject_cast<QLineEdit*>(widget) || qobject_cast<SizeEdit*>(widget);
    QVariantMap before = std::exchange(m_committed, now);
    if (m_undo)
        m_undo->push(new SettingsEdit(
            this, std::move(before), std::move(now), key, tr("Change %1").arg(label), typed));
    Q_EMIT optionsChanged();
}

void RepackPanel::revisit(const QVariantMap& values, const char* key, bool undone)
{
    restoreSettings(values);
    for (const Field& f : fields())
        if (qstrcmp(f.key, key) == 0) {
            flash(f.widget);
            Q_EMIT editRevisited(f.label, undone);
        }
}

void RepackPanel::setUndoStack(QUndoStack* stack)
{
    m_undo = stack;
}

void RepackPanel::startFrom(const QVariantMap& values)
{
    QVariantMap kept = values;
    kept.insert(QStringLiteral("repack/keep"), true);
    kept.insert(QStringLiteral("repack/compact"), QStringList());
    restoreSettings(kept);
    m_baseline = m_committed;
}

bool RepackPanel::isEdited() const
{
    return settingValues() != m_baseline;
}

QStringList RepackPanel::editedFields() const
{
    const QVariantMap now = settingValues();
    QStringList labels;
    for (const Field& f : fields()) {
        const QString key = QStringLiteral("repack/") + QLatin1StringView(f.key);
        if (now.value(key) != m_baseline.value(key))
            labels << f.label;
    }
    return labels;
}

bool RepackPanel::keepsPlacement() const
{
    return m_keep->isChecked();
}

void RepackPanel::setCompactOffers(const QList<std::pair<QString, QString>>& offers)
{
    m_compactOffers = offers;
}

void RepackPanel::setCompactFile(const QString& location, bool compact)
{
    if (m_compactFiles.contains(location) == compact)
        return;
    if (compact && !m_keep->isChecked()) { // part of this one edit
        const QSignalBlocker block(m_keep);
        m_keep->setChecked(true);
        m_compact->setEnabled(true);
    }
    if (compact)
        m_compactFiles << location;
    else
        m_compactFiles.removeAll(location);
    showCompact();
    edited("compact");
}

void RepackPanel::setAlwaysCompacted(const QStringList& locations)
{
    m_alwaysCompacted = locations;
    showCompact();
}

void RepackPanel::showCompact()
{
    if (!m_alwaysCompacted.isEmpty()) {
        m_compact->setText(tr("Compact (all)"));
        m_compact->setToolTip(
            tr("A local copy of a model read where it lives holds only the bytes its tensors "
               "read: keeping tensors where they are, its data files are compacted, the orphaned "
               "ranges of the served files left behind."));
        return;
    }
    m_compact->setText(
        m_compactFiles.isEmpty() ? tr("Compact") : tr("Compact (%1)").arg(m_compactFiles.size()));
    m_compact->setToolTip(
        tr("Data files whose own tensors are laid out again back to back, closing the orphaned "
           "ranges that tensors moved out of them left; every other file keeps its layout. "
           "Also in the layout map's and the table's context menu.")
        + (m_compactFiles.isEmpty()
                ? QString()
                : u'\n' + tr("Compacting: %1").arg(m_compactFiles.join(QStringLiteral(", ")))));
}

void RepackPanel::fillCompactMenu()
{
    QMenu* menu = m_compact->menu();
    menu->clear();
    QList<std::pair<QString, QString>> entries = m_compactOffers;
    for (const QString& file : m_compactFiles)
        if (std::none_of(entries.cbegin(), entries.cend(),
                [&file](const auto& offer) { return offer.first == file; }))
            entries.append({file, QString()});
    for (const auto& [file, detail] : entries) {
        QAction* action = menu->addAction(
            detail.isEmpty() ? file : QStringLiteral("%1 (%2)").arg(file, detail));
        action->setObjectName(QStringLiteral("compactChoice"));
        action->setCheckable(true);
        action->setChecked(m_compactFiles.contains(file) || m_alwaysCompacted.contains(file));
        action->setEnabled(!m_alwaysCompacted.contains(file)); // a served model's copy
        connect(
            action, &QAction::toggled, this, [this, file](bool on) { setCompactFile(file, on); });
    }
    if (entries.isEmpty())
        menu->addAction(tr("The model has no data file"))->setEnabled(false);
}

bool RepackPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::ShortcutOverride && m_undo) {
        auto* key = static_cast<QKeyEvent*>(event);
        if (key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo)) {
            event->ignore(); // the window's Undo / Redo take it
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

bool RepackPanel::safetensors() const
{
    return m_format->currentData().toInt() == int(repack::DataFormat::Safetensors);
}

// Safetensors files have no gaps, so no alignment; without alignment, the size it starts from
// means nothing.
void RepackPanel::applyFormat()
{
    m_alignment->setEnabled(!safetensors());
    m_alignThreshold->setEnabled(!safetensors() && m_alignment->currentData().toULongLong() != 0);
}

void RepackPanel::followModelFormat(std::optional<repack::DataFormat> format)
{
    if (!format)
        return;
    const int index = m_format->findData(int(*format));
    if (index < 0 || index == m_format->currentIndex())
        return;
    // What the files are is where the model starts from, not an edit.
    const bool restoring = std::exchange(m_restoring, true);
    m_format->setCurrentIndex(index);
    m_restoring = restoring;
    m_committed.insert(QStringLiteral("repack/format"), index);
    m_baseline.insert(QStringLiteral("repack/format"), index);
    Q_EMIT optionsChanged();
}

const repack::Target* RepackPanel::target() const
{
    return repack::findTarget(m_target->currentData().toString().toStdString());
}

// Sets the fields the chosen target decides (as the core's applyTarget decides them); the data
// file name shows as the placeholder.
void RepackPanel::applyTarget()
{
    if (const repack::Target* t = target()) {
        repack::SaveOptions decided;
        repack::applyTarget(*t, m_modelPath.toStdString(), decided);
        const int align = m_alignment->findData(QVariant::fromValue<qulonglong>(decided.alignment));
        if (align >= 0)
            m_alignment->setCurrentIndex(align);
        m_alignThreshold->setValue(decided.alignThreshold);
        // The field shows whole MiB (0x7fe00000 - 1 and 5,000,000,000 bytes are no whole
        // unit); options() uses the exact limit while the field still shows that.
        m_shardSize->setValue(decided.shardSize / (1u << 20) * (1u << 20));
        m_targetShardShown = m_shardSize->value();
    }
    showDefaultDataFile();
}

void RepackPanel::addButtons(const QList<QAction*>& actions)
{
    for (QAction* action : actions) {
        auto* button = new QToolButton(m_buttons);
        button->setDefaultAction(action);
        button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
        button->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        m_buttons->layout()->addWidget(button);
    }
}

void RepackPanel::validate()
{
    const QString error = dataFileNameError(m_dataFile->text());
    m_dataFileError->setText(error);
    m_dataFileError->setVisible(!error.isEmpty());
    m_dataFile->setStyleSheet(
        error.isEmpty() ? QString() : QStringLiteral("border: 1px solid #c01c28;"));
}

QString RepackPanel::validationError() const
{
    return dataFileNameError(m_dataFile->text());
}

const repack::OptionNames& RepackPanel::optionNames()
{
    static const repack::OptionNames names{.target = "Target",
        .data = "Data file",
        .threshold = "Threshold",
        .align = "Alignment",
        .alignThreshold = "Align from",
        .order = "Order",
        .allInline = "inline",
        .shardSize = "Shard size",
        .dedupe = "dedupe",
        .format = "Format",
        .keep = "keep",
        .compact = "Compact",
        .wait = "wait"};
    return names;
}

repack::SaveRequest RepackPanel::request(const QString& outputModel) const
{
    if (m_keep->isChecked()) {
        // The layout on disk, moved only by pins: the layout fields wait for a change, but
        // the pins to the save's data file go to the file the Data file field shows.
        repack::SaveRequest request;
        request.keep = true;
        request.data = saveDataFile(outputModel).toStdString();
        request.dataForPins = true;
        for (const QString& file : m_compactFiles)
            request.compact.push_back(file.toStdString());
        for (const QString& file : m_alwaysCompacted)
            if (!m_compactFiles.contains(file))
                request.compact.push_back(file.toStdString());
        request.checksum = m_checksum->isChecked();
        request.removeUnused = m_removeUnused->isChecked();
        return request;
    }
    return ruleRequest();
}

QString RepackPanel::saveDataFile(const QString& outputModel) const
{
    return ruleDataFile(ruleRequest(), outputModel);
}

QString RepackPanel::ruleDataFile(repack::SaveRequest rule, const QString& outputModel) const
{
    const std::string model = (outputModel.isEmpty() ? m_modelPath : outputModel).toStdString();
    if (model.empty())
        return QString::fromStdString(rule.data);
    rule.keep = false;
    auto applied = repack::applySaveRequest(rule, model, optionNames());
    // The fields cannot be applied (the preview says why): only a typed name is known.
    return QString::fromStdString(
        applied ? repack::saveDataFile(model, applied->options) : rule.data);
}

repack::SaveRequest RepackPanel::ruleRequest() const
{
    repack::SaveRequest request;
    const repack::Target* t = target();
    // The target decides first; the fields, as they show, win (explicit options do too).
    if (t)
        request.target = std::string(t->name);
    request.threshold = repack::sizeText(m_threshold->value());
    // Empty: named after the model it is saved as (the target's suffix, or ".data").
    request.data = m_dataFile->text().toStdString();
    if (safetensors())
        request.format = "safetensors"; // no alignment: the core says what that means
    else
        request.align = repack::sizeText(m_alignment->currentData().toULongLong());
    request.alignThreshold = repack::sizeText(m_alignThreshold->value());
    request.order
        = repack::TensorOrder(m_order->currentData().toInt()) == repack::TensorOrder::SizeAscending
        ? "size"
        : "declaration";
    request.noAttributes = !m_attributes->isChecked();
    if (!t || m_shardSize->value() != m_targetShardShown) // else the target's exact limit
        request.shardSize = repack::sizeText(m_shardSize->value());
    request.checksum = m_checksum->isChecked();
    request.removeUnused = m_removeUnused->isChecked();
    return request;
}

repack::Result<repack::SaveOptions> RepackPanel::options(const QString& outputModel) const
{
    auto applied = repack::applySaveRequest(request(outputModel),
        (outputModel.isEmpty() ? m_modelPath : outputModel).toStdString(), optionNames());
    if (!applied)
        return applied.error();
    return std::move(applied->options);
}

void RepackPanel::setModelPath(const QString& path)
{
    m_modelPath = path;
    showDefaultDataFile();
}

// The name planSave gives the data file when the field is empty: the core names it.
void RepackPanel::showDefaultDataFile()
{
    if (m_modelPath.isEmpty()) {
        m_dataFile->setPlaceholderText({});
        return;
    }
    // What the rule would name it (with "keep", only pins to the save's data file go there).
    repack::SaveRequest unnamed = ruleRequest();
    unnamed.data.clear();
    m_dataFile->setPlaceholderText(ruleDataFile(std::move(unnamed)));
}

void RepackPanel::setPreview(const QString& text, bool problem)
{
    m_preview->setText(text);
    m_preview->setStyleSheet(problem ? QStringLiteral("color: #c01c28;") : QString());
    const QString blocker = problem ? text : QString();
    if (blocker != m_blocker) {
        m_blocker = blocker;
        Q_EMIT saveBlockerChanged(m_blocker);
    }
}

QVariantMap RepackPanel::settingValues() const
{
    return {
        {QStringLiteral("repack/keep"), m_keep->isChecked()},
        {QStringLiteral("repack/compact"), m_compactFiles},
        {QStringLiteral("repack/target"), m_target->currentData()},
        {QStringLiteral("repack/format"), m_format->currentIndex()},
        {QStringLiteral("repack/threshold"), QVariant::fromValue<qulonglong>(m_threshold->value())},
        {QStringLiteral("repack/dataFile"), m_dataFile->text()},
        {QStringLiteral("repack/alignment"), m_alignment->currentIndex()},
        {QStringLiteral("repack/alignThreshold"),
            QVariant::fromValue<qulonglong>(m_alignThreshold->value())},
        {QStringLiteral("repack/order"), m_order->currentIndex()},
        {QStringLiteral("repack/attributes"), m_attributes->isChecked()},
        {QStringLiteral("repack/shardSize"), QVariant::fromValue<qulonglong>(m_shardSize->value())},
        {QStringLiteral("repack/checksum"), m_checksum->isChecked()},
        {QStringLiteral("repack/removeUnused"), m_removeUnused->isChecked()},
    };
}

void RepackPanel::restoreSettings(const QVariantMap& values)
{
    auto value = [&](const char* key, const QVariant& fallback) {
        return values.value(QStringLiteral("repack/") + QLatin1StringView(key), fallback);
    };
    const bool restoring = std::exchange(m_restoring, true);
    m_keep->setChecked(value("keep", true).toBool());
    m_compactFiles = value("compact", QStringList()).toStringList();
    showCompact();
    // The target first: the saved fields below then win, as they did when saved.
    m_target->setCurrentIndex(std::max(0, m_target->findData(value("target", QString()))));
    m_format->setCurrentIndex(std::clamp(value("format", 0).toInt(), 0, m_format->count() - 1));
    const repack::SaveOptions defaults;
    m_threshold->setValue(
        value("threshold", QVariant::fromValue<qulonglong>(defaults.threshold)).toULongLong());
    m_dataFile->setText(value("dataFile", QString()).toString());
    const int defaultAlignment
        = std::max(0, m_alignment->findData(QVariant::fromValue<qulonglong>(defaults.alignment)));
    m_alignment->setCurrentIndex(
        std::clamp(value("alignment", defaultAlignment).toInt(), 0, m_alignment->count() - 1));
    m_alignThreshold->setValue(
        value("alignThreshold", QVariant::fromValue<qulonglong>(defaults.alignThreshold))
            .toULongLong());
    m_order->setCurrentIndex(std::clamp(value("order", 0).toInt(), 0, m_order->count() - 1));
    m_attributes->setChecked(value("attributes", defaults.includeAttributes).toBool());
    m_shardSize->setValue(value("shardSize", 0).toULongLong());
    m_checksum->setChecked(value("checksum", false).toBool());
    m_removeUnused->setChecked(value("removeUnused", false).toBool());
    validate();
    m_restoring = restoring;
    m_committed = settingValues();
    Q_EMIT optionsChanged();
}

} // namespace ui
