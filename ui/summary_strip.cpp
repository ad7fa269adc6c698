#include "summary_strip.h"

#include "byte_format.h"
#include "model_snapshot.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>

namespace ui {
namespace {

constexpr uint64_t kProtobufLimit = 2ull << 30;

} // namespace

SummaryStrip::SummaryStrip(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    layout->setSpacing(18);
    m_tensors = addField(tr("Tensors"));
    m_inline = addField(tr("Inline"));
    m_external = addField(tr("External"));
    m_files = addField(tr("Data files"));
    m_protobuf = addField(tr("Protobuf"));
    m_orphaned = addField(tr("Orphaned"));
    layout->addStretch();
}

QLabel* SummaryStrip::addField(const QString& title)
{
    auto* box = new QWidget(this);
    auto* column = new QVBoxLayout(box);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(0);
    auto* caption = new QLabel(title, box);
    QFont small = caption->font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    caption->setFont(small);
    caption->setForegroundRole(QPalette::PlaceholderText);
    auto* value = new QLabel(box);
    QFont bold = value->font();
    bold.setBold(true);
    value->setFont(bold);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    column->addWidget(caption);
    column->addWidget(value);
    static_cast<QHBoxLayout*>(layout())->addWidget(box);
    return value;
}

void SummaryStrip::setSnapshot(const ModelSnapshot& snapshot)
{
    m_tensors->setText(QLocale().toString(snapshot.tensors.size()));
    m_inline->setText(formatBytes(snapshot.inlineBytes));

    m_external->setText(formatBytes(snapshot.externalBytes));

    // Per data file totals; past a few files the rest go to the tooltip.
    constexpr qsizetype kShownFiles = 3;
    QStringList shown;
    QStringList details;
    for (const repack::FileLayout& file : snapshot.layouts) {
        const QString entry
            = QString::fromStdString(file.location) + QStringLiteral(" ") + formatBytes(file.bytes);
        if (shown.size() < kShownFiles)
            shown << entry;
        details << entry + tr(" (%1 referenced)").arg(formatBytes(file.referencedBytes));
    }
    QString files = shown.isEmpty() ? tr("none") : shown.join(QStringLiteral(", "));
    if (details.size() > kShownFiles)
        files += tr(", %1 more").arg(details.size() - kShownFiles);
    m_files->setText(files);
    m_files->setToolTip(details.join(u'\n'));

    const double share = 100.0 * double(snapshot.protobufBytes) / double(kProtobufLimit);
    const QString percent = share > 0 && share < 0.01
        ? QStringLiteral("< 0.01")
        : QString::number(share, 'f', share < 1 ? 2 : 1);
    m_protobuf->setText(
        tr("%1 (%2% of the 2 GiB limit)").arg(formatBytes(snapshot.protobufBytes), percent));
    QPalette protobufPalette = palette();
    if (share >= 80)
        protobufPalette.setColor(QPalette::WindowText, QColor(0xc0, 0x1c, 0x28));
    m_protobuf->setPalette(protobufPalette);

    m_orphaned->setText(formatBytes(snapshot.orphanedBytes));
    QPalette orphanPalette = palette();
    if (snapshot.orphanedBytes)
        orphanPalette.setColor(QPalette::WindowText, QColor(0xc2, 0x6a, 0x10));
    m_orphaned->setPalette(orphanPalette);
}

QString SummaryStrip::text() const
{
    return QStringList{m_tensors->text(), m_inline->text(), m_external->text(), m_files->text(),
        m_protobuf->text(), m_orphaned->text()}
        .join(QStringLiteral(" | "));
}

} // namespace ui
