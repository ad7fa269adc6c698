#include "summary_strip.h"

#include "ui/models/model_snapshot.h"
#include "ui/util/byte_format.h"

#include <QLabel>
#include <QLayout>
#include <QLocale>
#include <QVBoxLayout>

#include <algorithm>

namespace ui {
namespace {

constexpr uint64_t kProtobufLimit = 2ull << 30;

// Lays the fields out left to right and starts a new row where the next one would not fit, so
// a narrow window shows every field (on two rows) instead of cutting the last ones off.
class FlowLayout : public QLayout {
public:
    explicit FlowLayout(QWidget* parent)
        : QLayout(parent)
    {
    }
    ~FlowLayout() override
    {
        while (QLayoutItem* item = takeAt(0))
            delete item;
    }

    void addItem(QLayoutItem* item) override { m_items.append(item); }
    int count() const override { return int(m_items.size()); }
    QLayoutItem* itemAt(int index) const override { return m_items.value(index); }
    QLayoutItem* takeAt(int index) override
    {
        return index >= 0 && index < m_items.size() ? m_items.takeAt(index) : nullptr;
    }
    Qt::Orientations expandingDirections() const override { return {}; }
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override { return place(QRect(0, 0, width, 0), false); }
    void setGeometry(const QRect& rect) override
    {
        QLayout::setGeometry(rect);
        place(rect, true);
    }
    // The widest field: the strip never needs more width than that, it wraps instead.
    QSize sizeHint() const override { return minimumSize(); }
    QSize minimumSize() const override
    {
        QSize size;
        for (const QLayoutItem* item : m_items)
            size = size.expandedTo(item->sizeHint());
        const QMargins m = contentsMargins();
        return size + QSize(m.left() + m.right(), m.top() + m.bottom());
    }

private:
    // Places the items in `rect` (when `apply`); returns the height they take.
    int place(const QRect& rect, bool apply) const
    {
        const QRect area = rect.marginsRemoved(contentsMargins());
        int x = area.x();
        int y = area.y();
        int rowHeight = 0;
        for (QLayoutItem* item : m_items) {
            const QSize hint = item->sizeHint();
            if (x > area.x() && x + hint.width() > area.right() + 1) {
                x = area.x();
                y += rowHeight + spacing() / 3;
                rowHeight = 0;
            }
            if (apply)
                item->setGeometry(QRect(QPoint(x, y), hint));
            x += hint.width() + spacing();
            rowHeight = std::max(rowHeight, hint.height());
        }
        return y + rowHeight - rect.y() + contentsMargins().bottom();
    }

    QList<QLayoutItem*> m_items;
};

} // namespace

SummaryStrip::SummaryStrip(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new FlowLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    layout->setSpacing(18);
    m_tensors = addField(tr("Tensors"));
    m_inline = addField(tr("Inline"));
    m_external = addField(tr("External"));
    m_files = addField(tr("Data files"));
    m_protobuf = addField(tr("Protobuf"));
    m_orphaned = addField(tr("Orphaned"));
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
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
    layout()->addWidget(box);
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
    // Long data file names must not widen the strip past a narrow window: the full list is in
    // the tooltip.
    const int widest = m_files->fontMetrics().averageCharWidth() * 48;
    m_files->setText(m_files->fontMetrics().elidedText(files, Qt::ElideRight, widest));
    m_files->setToolTip(details.join(u'\n'));

    const double share = 100.0 * double(snapshot.protobufBytes) / double(kProtobufLimit);
    const QString percent = share > 0 && share < 0.01
        ? QStringLiteral("< 0.01")
        : QString::number(share, 'f', share < 1 ? 2 : 1);
    m_protobuf->setText(tr("%1 (%2% of 2 GiB)").arg(formatBytes(snapshot.protobufBytes), percent));
    m_protobuf->setToolTip(tr("Size of the .onnx file; protobuf cannot read one of 2 GiB or more, "
                              "so tensors past that must be stored in data files."));
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
