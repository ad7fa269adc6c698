// The panel's widgets as the constructor builds them: each field's choices and tooltips, the
// rows they sit in, and the signals that make each change an edit.
#include "repack_panel.h"

#include "size_edit.h"

#include "core/plan/save_plan.h"
#include "core/plan/targets.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QScrollArea>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace ui {

void RepackPanel::setUpFields()
{
    m_target->addItem(tr("None"), QString());
    m_target->setItemData(0, tr("Set every option below yourself"), Qt::ToolTipRole);
    for (const repack::Target& t : repack::targets()) {
        const QString name = QString::fromUtf8(t.name.data(), qsizetype(t.name.size()));
        m_target->addItem(name, name);
        m_target->setItemData(m_target->count() - 1,
            QString::fromUtf8(t.summary.data(), qsizetype(t.summary.size())), Qt::ToolTipRole);
    }
    m_target->setToolTip(tr("Data file name, alignment and file limits for one reader "
                            "(docs/targets.md); options changed afterwards win."));
    m_format->addItem(tr("ONNX data"), int(repack::DataFormat::Raw));
    m_format->setItemData(0, tr("Raw bytes, aligned as set below"), Qt::ToolTipRole);
    m_format->addItem(tr("safetensors"), int(repack::DataFormat::Safetensors));
    m_format->setItemData(1,
        tr("Each data file is also a .safetensors file: a header naming every tensor, then the "
           "tensors back to back (the format allows no alignment gaps)"),
        Qt::ToolTipRole);
    m_format->setToolTip(tr("What the data files are (docs/targets.md)"));
    m_keep->setChecked(true);
    m_keep->setToolTip(
        tr("The layout on disk is where a save starts from: only the tensors you pin move. "
           "Unchecked, or as soon as you change an option below, the threshold rule places "
           "every tensor that is not pinned."));
    m_compact->setObjectName(QStringLiteral("compactButton"));
    m_compact->setPopupMode(QToolButton::InstantPopup);
    m_compact->setMenu(new QMenu(m_compact));
    connect(m_compact->menu(), &QMenu::aboutToShow, this, &RepackPanel::fillCompactMenu);
    showCompact();
    m_threshold->setValue(repack::SaveOptions{}.threshold);
    m_threshold->setToolTip(tr("Tensors of at least this size are stored in the data file."));
    m_dataFile->setClearButtonEnabled(true);
    m_dataFileError->setWordWrap(true);
    m_dataFileError->setStyleSheet(QStringLiteral("color: #c01c28;"));
    m_dataFileError->hide();
    m_alignment->addItem(tr("None (dense)"), QVariant::fromValue<qulonglong>(0));
    m_alignment->addItem(tr("4 KiB"), QVariant::fromValue<qulonglong>(4096));
    m_alignment->addItem(tr("64 KiB"), QVariant::fromValue<qulonglong>(65536));
    m_alignment->setCurrentIndex(std::max(0,
        m_alignment->findData(QVariant::fromValue<qulonglong>(repack::SaveOptions{}.alignment))));
    m_alignment->setToolTip(
        tr("Offset alignment in the data file of tensors of at least the \"Align from\" size."));
    m_alignThreshold->setValue(repack::SaveOptions{}.alignThreshold);
    m_alignThreshold->setToolTip(tr("Tensors of at least this size start at an aligned offset; "
                                    "smaller ones are packed densely between them."));
    m_order->addItem(tr("Declaration"), int(repack::TensorOrder::Declaration));
    m_order->addItem(tr("Size, smallest first"), int(repack::TensorOrder::SizeAscending));
    m_attributes->setChecked(repack::SaveOptions{}.includeAttributes);
    m_removeUnused->setToolTip(
        tr("After saving a model over itself, delete the data files it no longer uses. Files "
           "that another model in the folder uses are never removed."));
    m_shardSize->setZeroText(tr("no sharding"));
    m_shardSize->setValue(0);
    m_preview->setWordWrap(true);
    m_preview->setTextFormat(Qt::PlainText);
    m_preview->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_preview->setMargin(6);
}

void RepackPanel::layOutRows()
{
    // A plan of 91 shards names 91 files: the preview scrolls rather than being cut off.
    auto* previewArea = new QScrollArea(this);
    previewArea->setWidget(m_preview);
    previewArea->setWidgetResizable(true);
    previewArea->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    previewArea->setMinimumHeight(m_preview->fontMetrics().lineSpacing() * 4);

    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("Tar&get:"), m_target);
    form->addRow(tr("&Threshold:"), m_threshold);
    form->addRow(tr("Fo&rmat:"), m_format);
    form->addRow(tr("&Data file:"), m_dataFile);
    form->addRow(QString(), m_dataFileError);
    form->addRow(tr("&Alignment:"), m_alignment);
    form->addRow(tr("Align &from:"), m_alignThreshold);
    form->addRow(tr("&Order:"), m_order);
    form->addRow(tr("&Shard size:"), m_shardSize);

    // The check boxes span the panel rather than the field column: the panel stays narrow
    // enough to leave the table its columns at 1024 px.
    // The options scroll when the screen is short (a laptop at 150 %): the preview and the
    // Save buttons below them stay in view.
    auto* options = new QWidget(this);
    auto* optionsLayout = new QVBoxLayout(options);
    optionsLayout->setContentsMargins(0, 0, 0, 0);
    m_keep->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred); // the text may elide
    auto* keepRow = new QHBoxLayout; // the button costs the panel no height
    keepRow->addWidget(m_keep, 1);
    keepRow->addWidget(m_compact);
    optionsLayout->addLayout(keepRow);
    optionsLayout->addLayout(form);
    optionsLayout->addWidget(m_attributes);
    optionsLayout->addWidget(m_checksum);
    optionsLayout->addWidget(m_removeUnused);
    auto* optionsArea = new QScrollArea(this);
    optionsArea->setObjectName(QStringLiteral("repackOptions"));
    optionsArea->setFrameShape(QFrame::NoFrame);
    optionsArea->setWidgetResizable(true);
    optionsArea->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    optionsArea->setWidget(options);
    // As wide as the fields need beside a scroll bar; a few rows tall at least.
    optionsArea->setMinimumWidth(
        options->minimumSizeHint().width() + optionsArea->verticalScrollBar()->sizeHint().width());
    optionsArea->setMinimumHeight(m_target->sizeHint().height() * 3);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(optionsArea);
    auto* previewTitle = new QLabel(tr("Preview"), this);
    QFont bold = previewTitle->font();
    bold.setBold(true);
    previewTitle->setFont(bold);
    layout->addWidget(previewTitle);
    layout->addWidget(previewArea, 1);
    layout->addWidget(m_buttons);
    new QHBoxLayout(m_buttons);
    m_buttons->layout()->setContentsMargins(0, 0, 0, 0);
}

void RepackPanel::connectEdits()
{
    connect(m_keep, &QCheckBox::toggled, this, [this] {
        m_compact->setEnabled(m_keep->isChecked());
        edited("keep");
    });
    connect(m_target, &QComboBox::currentIndexChanged, this, [this] {
        // The fields the target decides change with it: one edit.
        const bool restoring = std::exchange(m_restoring, true);
        applyTarget();
        m_restoring = restoring;
        edited("target");
    });
    connect(m_threshold, &SizeEdit::valueChanged, this, [this] { edited("threshold"); });
    connect(m_shardSize, &SizeEdit::valueChanged, this, [this] { edited("shardSize"); });
    connect(m_dataFile, &QLineEdit::textChanged, this, [this] {
        validate();
        edited("dataFile");
    });
    connect(m_alignThreshold, &SizeEdit::valueChanged, this, [this] { edited("alignThreshold"); });
    connect(m_alignment, &QComboBox::currentIndexChanged, this, [this] {
        applyFormat();
        edited("alignment");
    });
    connect(m_format, &QComboBox::currentIndexChanged, this, [this] {
        applyFormat();
        showDefaultDataFile();
        edited("format");
    });
    connect(m_order, &QComboBox::currentIndexChanged, this, [this] { edited("order"); });
    connect(m_attributes, &QCheckBox::toggled, this, [this] { edited("attributes"); });
    connect(m_checksum, &QCheckBox::toggled, this, [this] { edited("checksum"); });
    connect(m_removeUnused, &QCheckBox::toggled, this, [this] { edited("removeUnused"); });
    // Ctrl+Z in a field undoes on the shared stack too, not just that field's text.
    for (QWidget* w :
        {static_cast<QWidget*>(m_dataFile), static_cast<QWidget*>(m_threshold->spinBox()),
            static_cast<QWidget*>(m_alignThreshold->spinBox()),
            static_cast<QWidget*>(m_shardSize->spinBox())})
        w->installEventFilter(this);
}

} // namespace ui
