// The options of the next save (threshold, data file, alignment and the size from which it
// applies, order, attributes, shards, checksum, removing data files an in-place save stops
// using), the live preview of what it will move, and the Save buttons.
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

namespace repack {
struct Target;
}

namespace ui {

class SizeEdit;

class RepackPanel : public QWidget {
    Q_OBJECT
public:
    explicit RepackPanel(QWidget* parent = nullptr);

    // What the fields ask for, as the core's request (core/plan/save_request.h), the one the
    // CLI's flags and the Python package's keywords fill too. The wait, the consent (force)
    // and the pins are the caller's.
    repack::SaveRequest request() const;
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
    // them back (missing keys keep their defaults).
    QVariantMap settingValues() const;
    void restoreSettings(const QVariantMap& values);

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

Q_SIGNALS:
    void optionsChanged();
    // saveBlocker() changed (empty: the options can be saved again).
    void saveBlockerChanged(const QString& reason);

private:
    void validate();
    void applyTarget();
    void applyFormat();
    void showDefaultDataFile();
    bool safetensors() const;
    const repack::Target* target() const;

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
};

// Empty when `name` is a usable data file name: relative, without "..", naming a file.
QString dataFileNameError(const QString& name);

} // namespace ui
