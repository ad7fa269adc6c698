// The options of the next save (threshold, data file, alignment and the size from which it
// applies, order, attributes, shards, checksum, removing data files an in-place save stops
// using), the live preview of what it will move, and the Save buttons.
//
// The layout on disk is the baseline: "Keep tensors where they are" starts checked, and a save
// then moves only pinned tensors (SaveOptions::keepPlacement, as the Python package's save()
// without options). Changing any layout option unchecks it: the threshold rule then places
// every tensor that is not pinned. Every edit is one command on the undo stack the window
// shares with the pins (setUndoStack); undoing one puts the fields back and flashes the one it
// changed.
#pragma once

#include "core/plan/save_options.h"
#include "core/plan/save_request.h"
#include "core/result.h"

#include <QVariantMap>
#include <QWidget>

#include <optional>

class QAction;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QToolButton;
class QUndoStack;

namespace repack {
struct Target;
}

namespace ui {

class SizeEdit;

class RepackPanel : public QWidget {
    Q_OBJECT
public:
    explicit RepackPanel(QWidget* parent = nullptr);

    // What the fields ask for a save as `outputModel` (the model shown when empty), as the
    // core's request (core/plan/save_request.h), the one the CLI's flags and the Python
    // package's keywords fill too. Keeping tensors where they are, it names saveDataFile() for
    // the pins that name no file. The wait, the consent (force) and the pins are the caller's.
    repack::SaveRequest request(const QString& outputModel = {}) const;
    // The save's data file of a save as `outputModel` (the model shown when empty): where pins
    // that name no file go ("(save's data file)", Ctrl+E) and, with the threshold rule, every
    // external tensor not pinned. The name the Data file field shows: its text, else the name
    // the core gives the fields' options (repack::saveDataFile), as its placeholder shows it.
    QString saveDataFile(const QString& outputModel = {}) const;
    // The request as the core applies it to a save as `outputModel` (the model shown when
    // empty): the options, or the core's refusal naming these fields.
    repack::Result<repack::SaveOptions> options(const QString& outputModel = {}) const;
    // How the core's messages name the fields.
    static const repack::OptionNames& optionNames();
    // Empty when the options can be used, else why not (shown under the data file field).
    QString validationError() const;

    // The model a save writes: the data file name shown when the field is empty is the one the
    // core gives it (repack::saveDataFile: "<model>.data", a target's "<model>_data", ...).
    void setModelPath(const QString& path);
    // A model was opened whose data files are all of `format`: the Format chooser follows it,
    // so a re-save keeps what the files are. nullopt (no external data) keeps the choice.
    void followModelFormat(std::optional<repack::DataFormat> format);
    // `problem`: the preview says the options cannot be saved, and why (`text`); saveBlocker()
    // returns that text until a preview without a problem replaces it.
    void setPreview(const QString& text, bool problem = false);
    QString saveBlocker() const { return m_blocker; }
    void addButtons(const QList<QAction*>& actions);

    // The options as "repack/<name>" keys and values, for QSettings; restoreSettings takes
    // them back (missing keys get their defaults: the core's, or the chosen target's).
    // Restoring is not an edit: nothing goes on the undo stack.
    QVariantMap settingValues() const;
    void restoreSettings(const QVariantMap& values);

    // Edits (field changes) become undoable commands on `stack` (null: not undoable).
    void setUndoStack(QUndoStack* stack);
    // A model was opened or saved: the fields show `values` (restoreSettings, so {} means the
    // defaults), "Keep tensors where they are" is checked, and these are the values
    // isEdited() compares with.
    void startFrom(const QVariantMap& values);
    // The fields differ from what startFrom set: work a user would lose.
    bool isEdited() const;
    // The labels of the fields isEdited() finds changed ("Threshold", "Data file").
    QStringList editedFields() const;
    // A save keeps every tensor that is not pinned where it is.
    bool keepsPlacement() const;
    QCheckBox* keepBox() const { return m_keep; }
    // Keeping placement, the data files to compact (SaveRequest::compact): their own tensors
    // close the orphaned ranges between them. The Compact button beside "Keep tensors where they
    // are" lists the files offered and those chosen, each checkable; a save or an open starts
    // with none (a compacted file has nothing left to close).
    QToolButton* compactButton() const { return m_compact; }
    QStringList compactFiles() const { return m_compactFiles; }
    // The data files worth compacting (those with orphaned bytes), each with what the button's
    // menu says of it ("19.0 KiB orphaned").
    void setCompactOffers(const QList<std::pair<QString, QString>>& offers);
    // Chooses `location` for compacting, or drops it: one undoable edit ("Compact"). Choosing
    // checks "Keep tensors where they are" first when it is not (laid out anew, every file is
    // compact, but the user asked to keep the others where they are).
    void setCompactFile(const QString& location, bool compact = true);
    // The data files a save keeping placement compacts whatever the Compact button says: every
    // file of a model read where it lives (a URL), whose local copy holds only the bytes its
    // tensors read, not the served files' orphaned ranges as zeros. Empty for a local model.
    void setAlwaysCompacted(const QStringList& locations);

    SizeEdit* thresholdEdit() const { return m_threshold; }
    QLineEdit* dataFileEdit() const { return m_dataFile; }
    QLabel* previewLabel() const { return m_preview; }
    QComboBox* alignmentBox() const { return m_alignment; }
    SizeEdit* alignThresholdEdit() const { return m_alignThreshold; }
    QCheckBox* removeUnusedBox() const { return m_removeUnused; }
    SizeEdit* shardSizeEdit() const { return m_shardSize; }
    // "None", then each save target (core/plan/targets.h): choosing one sets alignment and shard
    // size; fields edited afterwards win, as explicit options do on the command line.
    QComboBox* targetBox() const { return m_target; }
    // Raw ONNX data files, or files that are also .safetensors files (no alignment then).
    QComboBox* formatBox() const { return m_format; }
    QComboBox* orderBox() const { return m_order; }
    QCheckBox* attributesBox() const { return m_attributes; }
    QCheckBox* checksumBox() const { return m_checksum; }

Q_SIGNALS:
    void optionsChanged();
    // saveBlocker() changed (empty: the options can be saved again).
    void saveBlockerChanged(const QString& reason);
    // Undo (`undone`) or redo of an edit set the field labelled `label` back or again.
    void editRevisited(const QString& label, bool undone);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    friend class SettingsEdit;
    struct Field {
        const char* key; // "repack/<key>" in settingValues()
        QString label;
        QWidget* widget;
        bool layout; // changing it asks for the threshold rule
    };
    // The constructor's steps: each field's choices, tooltips and starting value; the form,
    // the scrolling options and the preview around it; each field's change as an edit.
    void setUpFields();
    void layOutRows();
    void connectEdits();
    std::vector<Field> fields() const;
    // The request of the fields as they show, "keep" aside: what the threshold rule does.
    repack::SaveRequest ruleRequest() const;
    // The data file the rule's request `rule` names for a save as `outputModel` (the model
    // shown when empty): the core's repack::saveDataFile of its options.
    QString ruleDataFile(repack::SaveRequest rule, const QString& outputModel = {}) const;
    // A field's value changed: unless restoring, pushes the edit (and unchecks "keep" for a
    // layout field) and says the options changed.
    void edited(const char* key);
    // An undo or redo: the fields show `values`, the field `key` flashes.
    void revisit(const QVariantMap& values, const char* key, bool undone);
    void validate();
    void applyTarget();
    void applyFormat();
    void showDefaultDataFile();
    bool safetensors() const;
    const repack::Target* target() const;

    QCheckBox* m_keep;
    QToolButton* m_compact;
    QStringList m_compactFiles;
    QStringList m_alwaysCompacted;
    QList<std::pair<QString, QString>> m_compactOffers;
    void showCompact(); // the button's text and tooltip
    void fillCompactMenu(); // the files offered and chosen, as it opens
    QComboBox* m_target;
    QComboBox* m_format;
    QString m_modelPath;
    uint64_t m_targetShardShown = 0; // the shard field as the target set it
    SizeEdit* m_threshold;
    QLineEdit* m_dataFile;
    QLabel* m_dataFileError;
    QComboBox* m_alignment;
    SizeEdit* m_alignThreshold;
    QComboBox* m_order;
    QCheckBox* m_attributes;
    SizeEdit* m_shardSize;
    QCheckBox* m_checksum;
    QCheckBox* m_removeUnused;
    QLabel* m_preview;
    QString m_blocker;
    QWidget* m_buttons;
    QUndoStack* m_undo = nullptr;
    QVariantMap m_committed; // the values after the last edit: the next one's "before"
    QVariantMap m_baseline; // what startFrom set
    bool m_restoring = false;
};

} // namespace ui
