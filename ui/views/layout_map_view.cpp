#include "layout_map_view.h"

#include "compact_action.h"
#include "layout_palette.h"
#include "ui/models/model_snapshot.h"
#include "ui/models/placement_state.h"
#include "ui/models/tensor_table_model.h"
#include "ui/util/byte_format.h"

#include <QAbstractProxyModel>
#include <QAction>
#include <QApplication>
#include <QContextMenuEvent>
#include <QDrag>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QItemSelectionModel>
#include <QMenu>
#include <QMimeData>
#include <QMouseEvent>
#include <QPainter>
#include <QPen>
#include <QScrollBar>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <utility>

namespace ui {
namespace {

constexpr int kMargin = 10;
constexpr int kLegendHeight = 22;
constexpr int kTitleHeight = 20;
constexpr int kBandHeight = 26;
constexpr int kFileSpacing = 12;
constexpr double kMaxPixelsPerByte = 32;

using colors::kPadding;
using colors::kPinned;
using colors::kSelected;

} // namespace

LayoutMapView::LayoutMapView(QWidget* parent)
    : QAbstractScrollArea(parent)
{
    setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    viewport()->setMouseTracking(true);
    viewport()->setBackgroundRole(QPalette::Base);
    viewport()->setAcceptDrops(true);
    setMinimumHeight(kLegendHeight + kTitleHeight + kBandHeight + 2 * kMargin);
}

QSize LayoutMapView::sizeHint() const
{
    const int files = std::max<int>(1, int(m_files.size()));
    return {600, kLegendHeight + 2 * kMargin + files * (kTitleHeight + kBandHeight + kFileSpacing)};
}

void LayoutMapView::setSnapshot(const ModelSnapshot& snapshot)
{
    m_files = snapshot.layouts;
    m_tensors = snapshot.tensors;
    m_modelPath = snapshot.path;
    m_loadError.clear();
    m_places.assign(snapshot.tensors.size(), {});
    m_largestFile = 0;
    m_missing.assign(m_files.size(), {});
    m_ends.assign(m_files.size(), 0);
    for (int f = 0; f < int(m_files.size()); ++f) {
        // Tensors reading past the end of a file cut short: their bytes there are missing.
        const uint64_t bytes = m_files[f].bytes;
        const QString location = QString::fromStdString(m_files[f].location);
        m_ends[f] = bytes;
        for (int t = 0; t < m_tensors.size(); ++t) {
            const TensorRow& row = m_tensors[t];
            const uint64_t end = row.offset + row.length;
            if (!row.external || row.storage != location || end <= bytes || end < row.offset)
                continue;
            const uint64_t from = std::max(row.offset, bytes);
            m_missing[f].push_back({from, end - from, t});
            m_ends[f] = std::max(m_ends[f], end);
        }
        m_largestFile = std::max(m_largestFile, m_ends[f]);
        const auto& regions = m_files[f].regions;
        for (int r = 0; r < int(regions.size()); ++r) {
            const int t = regions[r].tensor;
            if (regions[r].type == repack::RegionType::Tensor && t >= 0 && t < int(m_places.size())
                && m_places[t].file < 0)
                m_places[t] = {f, r};
        }
    }
    m_highlight.setTensorCount(m_places.size());
    m_zoom = 1.0;
    updateScrollBars();
    horizontalScrollBar()->setValue(0);
    updateGeometry();
    viewport()->update();
}

void LayoutMapView::setSelectionModel(QItemSelectionModel* selection, QAbstractProxyModel* proxy)
{
    m_highlight.follow(selection, proxy, this, [this] { viewport()->update(); });
}

void LayoutMapView::setPlacementState(const PlacementState* state)
{
    if (m_placement)
        disconnect(m_placement, nullptr, viewport(), nullptr);
    m_placement = state;
    if (state)
        connect(state, &PlacementState::pinsChanged, viewport(), qOverload<>(&QWidget::update));
    viewport()->update();
}

bool LayoutMapView::isHighlighted(int tensor) const
{
    return m_highlight.isHighlighted(tensor);
}

double LayoutMapView::pixelsPerByte() const
{
    if (m_largestFile == 0)
        return 1;
    const double width = std::max(1, viewport()->width() - 2 * kMargin);
    return m_zoom * width / double(m_largestFile);
}

int LayoutMapView::bandTop(int file) const
{
    return kMargin + kLegendHeight + file * (kTitleHeight + kBandHeight + kFileSpacing)
        + kTitleHeight - verticalScrollBar()->value();
}

void LayoutMapView::updateScrollBars()
{
    const int width = std::max(1, viewport()->width() - 2 * kMargin);
    const double content = m_zoom * width;
    horizontalScrollBar()->setRange(0, int(std::min(content - width, 2e9)));
    horizontalScrollBar()->setPageStep(viewport()->width());
    horizontalScrollBar()->setSingleStep(20);
    verticalScrollBar()->setRange(0, std::max(0, sizeHint().height() - viewport()->height()));
    verticalScrollBar()->setPageStep(viewport()->height());
}

void LayoutMapView::zoomToFit()
{
    setZoom(1.0);
}

void LayoutMapView::setZoom(double zoom, int anchorX)
{
    // Keep the byte under `anchorX` in place while zooming.
    const double ppb = pixelsPerByte();
    const double anchorByte = (anchorX + horizontalScrollBar()->value() - kMargin) / ppb;
    const double maxZoom = m_largestFile
        ? std::max(1.0, kMaxPixelsPerByte * m_largestFile / std::max(1, viewport()->width()))
        : 1.0;
    m_zoom = std::clamp(zoom, 1.0, maxZoom);
    updateScrollBars();
    horizontalScrollBar()->setValue(int(anchorByte * pixelsPerByte() + kMargin - anchorX));
    viewport()->update();
}

void LayoutMapView::resizeEvent(QResizeEvent* event)
{
    QAbstractScrollArea::resizeEvent(event);
    updateScrollBars();
}

void LayoutMapView::wheelEvent(QWheelEvent* event)
{
    const QPoint delta = event->angleDelta();
    if (delta.y() == 0 || (event->modifiers() & Qt::ShiftModifier)) {
        QAbstractScrollArea::wheelEvent(event);
        return;
    }
    setZoom(m_zoom * std::pow(1.2, delta.y() / 120.0), int(event->position().x()));
    event->accept();
}

std::pair<int, double> LayoutMapView::byteAt(QPoint pos) const
{
    for (int f = 0; f < int(m_files.size()); ++f) {
        const int top = bandTop(f);
        if (pos.y() >= top && pos.y() < top + kBandHeight)
            return {f, (pos.x() + horizontalScrollBar()->value() - kMargin) / pixelsPerByte()};
    }
    return {-1, 0.0};
}

int LayoutMapView::regionAt(int file, uint64_t at) const
{
    const auto& regions = m_files[file].regions;
    // Overlaps are listed after the offset-sorted regions and win, being drawn on top.
    for (int r = int(regions.size()) - 1; r >= 0 && regions[r].type == repack::RegionType::Overlap;
         --r) {
        if (at >= regions[r].offset && at < regions[r].offset + regions[r].length)
            return r;
    }
    const auto end = std::find_if(regions.begin(), regions.end(),
        [](const repack::Region& r) { return r.type == repack::RegionType::Overlap; });
    auto it = std::upper_bound(regions.begin(), end, at,
        [](uint64_t value, const repack::Region& r) { return value < r.offset; });
    // Regions tile the file, so the last one starting at or before the byte holds it.
    return it != regions.begin() ? int(it - regions.begin()) - 1 : -1;
}

LayoutMapView::Hit LayoutMapView::hitTest(QPoint pos) const
{
    const auto [file, byte] = byteAt(pos);
    if (file < 0 || byte < 0 || byte >= double(m_files[file].bytes))
        return {};
    const int region = regionAt(file, uint64_t(byte));
    return region >= 0 ? Hit{file, region} : Hit{};
}

uint64_t LayoutMapView::missingBytes(int file) const
{
    if (file < 0 || file >= int(m_missing.size()))
        return 0;
    return m_ends[file] - m_files[file].bytes;
}

QString LayoutMapView::missingToolTip(int file, uint64_t byte) const
{
    for (const Missing& m : m_missing[file]) {
        if (byte < m.offset || byte >= m.offset + m.length)
            continue;
        const TensorRow& row = m_tensors[m.tensor];
        return tr("Missing: %1 reads bytes %2 to %3, but %4 ends at %5 (cut short?)")
            .arg(row.scope + u'/' + row.name)
            .arg(row.offset)
            .arg(row.offset + row.length)
            .arg(QString::fromStdString(m_files[file].location))
            .arg(m_files[file].bytes);
    }
    return {};
}

QString LayoutMapView::toolTipAtByte(int file, uint64_t byte) const
{
    if (file < 0 || file >= int(m_files.size()))
        return {};
    if (byte >= m_files[file].bytes)
        return missingToolTip(file, byte);
    const int region = regionAt(file, byte);
    return region >= 0 ? toolTipFor({file, region}) : QString();
}

int LayoutMapView::tensorAt(QPoint pos) const
{
    const Hit hit = hitTest(pos);
    if (hit.file < 0)
        return -1;
    const repack::Region& region = m_files[hit.file].regions[hit.region];
    return region.type == repack::RegionType::Tensor ? region.tensor : -1;
}

QPoint LayoutMapView::blockCenter(int tensor) const
{
    if (tensor < 0 || tensor >= int(m_places.size()) || m_places[tensor].file < 0)
        return {-1, -1};
    const Place place = m_places[tensor];
    const repack::Region& region = m_files[place.file].regions[place.region];
    const double ppb = pixelsPerByte();
    const double x
        = kMargin + (region.offset + region.length / 2.0) * ppb - horizontalScrollBar()->value();
    return {int(x), bandTop(place.file) + kBandHeight / 2};
}

QString LayoutMapView::toolTipFor(const Hit& hit) const
{
    const repack::Region& region = m_files[hit.file].regions[hit.region];
    const QString range = tr("offset %1, length %2 (%3)")
                              .arg(region.offset)
                              .arg(region.length)
                              .arg(formatBytes(region.length));
    switch (region.type) {
    case repack::RegionType::Tensor: {
        if (region.tensor < 0 || region.tensor >= m_tensors.size())
            return range;
        QString text = m_tensors[region.tensor].scope + u'/' + m_tensors[region.tensor].name;
        // A range stored once for identical tensors (repack --dedupe) is not an overlap.
        for (const repack::Region& other : m_files[hit.file].regions)
            if (region.shared && other.shared && &other != &region && other.offset == region.offset
                && other.tensor >= 0 && other.tensor < m_tensors.size())
                text += u'\n'
                    + tr("shared with %1 (identical bytes)")
                          .arg(m_tensors[other.tensor].scope + u'/' + m_tensors[other.tensor].name);
        return text + u'\n' + range;
    }
    case repack::RegionType::Padding:
        return tr("Alignment padding: what a %1 alignment asks for before the next tensor")
                   .arg(formatBytes(m_files[hit.file].alignment))
            + u'\n' + range;
    case repack::RegionType::Orphaned:
        return (m_files[hit.file].alignment
                       ? tr("Orphaned: no tensor references these bytes, and no %1 alignment "
                            "asks for them")
                             .arg(formatBytes(m_files[hit.file].alignment))
                       : tr("Orphaned: no tensor references these bytes"))
            + u'\n' + range;
    case repack::RegionType::Overlap:
        return tr("Overlap: several tensors share these bytes") + u'\n' + range;
    case repack::RegionType::Header:
        return tr("Safetensors header: the name, dtype, shape and offsets of each tensor in the "
                  "file")
            + u'\n' + range;
    }
    return {};
}

bool LayoutMapView::viewportEvent(QEvent* event)
{
    if (showToolTip(event, viewport(), [this](QPoint pos) {
            const auto [file, byte] = byteAt(pos);
            return file >= 0 && byte >= 0 ? toolTipAtByte(file, uint64_t(byte)) : QString();
        }))
        return true;
    return QAbstractScrollArea::viewportEvent(event);
}

void LayoutMapView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton || !m_highlight.selection().isValid()) {
        QAbstractScrollArea::mousePressEvent(event);
        return;
    }
    const int tensor = tensorAt(event->position().toPoint());
    m_pressPos = {-1, -1};
    if (tensor < 0)
        return;
    m_pressPos = event->position().toPoint();
    // A press on a selected block may start dragging the whole selection: keep it until then.
    if (isHighlighted(tensor) && event->modifiers() == Qt::NoModifier)
        return;
    if (!m_highlight.click(tensor, event->modifiers()))
        Q_EMIT hiddenTensorClicked(tensor);
}

void LayoutMapView::mouseMoveEvent(QMouseEvent* event)
{
    if ((event->buttons() & Qt::LeftButton) && m_pressPos.x() >= 0
        && (event->position().toPoint() - m_pressPos).manhattanLength()
            >= QApplication::startDragDistance()) {
        m_pressPos = {-1, -1};
        startDrag();
        return;
    }
    QAbstractScrollArea::mouseMoveEvent(event);
}

void LayoutMapView::mouseReleaseEvent(QMouseEvent* event)
{
    // A click without a drag on a block already selected selects just that block.
    const QPoint press = std::exchange(m_pressPos, QPoint(-1, -1));
    const int tensor = press.x() >= 0 ? tensorAt(press) : -1;
    if (event->button() == Qt::LeftButton && tensor >= 0 && isHighlighted(tensor)
        && event->modifiers() == Qt::NoModifier)
        m_highlight.click(tensor, Qt::NoModifier);
    QAbstractScrollArea::mouseReleaseEvent(event);
}

QMimeData* LayoutMapView::dragMimeData() const
{
    const TensorSelection& selection = m_highlight.selection();
    if (!selection.isValid() || !selection.proxy())
        return nullptr;
    // The same payload as dragging the rows in the table: the proxy maps them to tensors.
    return selection.proxy()->mimeData(selection.selectionModel()->selectedRows());
}

void LayoutMapView::startDrag()
{
    QMimeData* mime = dragMimeData();
    if (!mime)
        return;
    auto* drag = new QDrag(this);
    drag->setMimeData(mime);
    drag->exec(Qt::CopyAction, Qt::CopyAction);
}

int LayoutMapView::fileIndexAt(QPoint pos) const
{
    for (int f = 0; f < int(m_files.size()); ++f) {
        const int top = bandTop(f);
        if (pos.y() >= top - kTitleHeight && pos.y() < top + kBandHeight)
            return f;
    }
    return -1;
}

QString LayoutMapView::fileAt(QPoint pos) const
{
    const int file = fileIndexAt(pos);
    return file < 0 ? QString() : QString::fromStdString(m_files[size_t(file)].location);
}

QPoint LayoutMapView::fileBandPoint(const QString& location) const
{
    for (int f = 0; f < int(m_files.size()); ++f)
        if (QString::fromStdString(m_files[size_t(f)].location) == location)
            return {kMargin + 2, bandTop(f) + kBandHeight / 2};
    return {-1, -1};
}

void LayoutMapView::contextMenuEvent(QContextMenuEvent* event)
{
    // Delivered from the viewport (QAbstractScrollArea::viewportEvent): viewport coordinates.
    const int file = fileIndexAt(event->pos());
    if (file < 0) {
        event->ignore();
        return;
    }
    QMenu menu(this);
    QAction* compact = addCompactAction(&menu, m_files[size_t(file)]);
    connect(compact, &QAction::triggered, this,
        [this, location = compact->data().toString()] { Q_EMIT compactRequested(location); });
    menu.exec(event->globalPos());
}

void LayoutMapView::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasFormat(QString::fromLatin1(TensorTableModel::kMimeType)))
        event->accept();
    else
        event->ignore();
}

void LayoutMapView::dragMoveEvent(QDragMoveEvent* event)
{
    if (fileIndexAt(event->position().toPoint()) >= 0
        && !TensorTableModel::tensorsFromMime(event->mimeData(), m_modelPath).isEmpty()) {
        event->setDropAction(Qt::CopyAction);
        event->accept();
    } else {
        event->ignore();
    }
}

void LayoutMapView::dropEvent(QDropEvent* event)
{
    const QString location = fileAt(event->position().toPoint());
    const QList<int> tensors = TensorTableModel::tensorsFromMime(event->mimeData(), m_modelPath);
    if (location.isEmpty() || tensors.isEmpty()) {
        event->ignore();
        return;
    }
    event->setDropAction(Qt::CopyAction);
    event->accept();
    Q_EMIT tensorsDropped(tensors, location);
}

QList<LegendEntry> LayoutMapView::legend()
{
    using repack::RegionType;
    return {{colors::regionColor(RegionType::Tensor), Qt::SolidPattern, tr("tensor")},
        {kSelected, Qt::SolidPattern, tr("selected")},
        {colors::regionColor(RegionType::Padding), Qt::SolidPattern, tr("padding")},
        {colors::regionColor(RegionType::Orphaned), Qt::SolidPattern, tr("orphaned")},
        {colors::regionColor(RegionType::Overlap), Qt::SolidPattern, tr("overlap")},
        {colors::regionColor(RegionType::Header), Qt::SolidPattern, tr("header")},
        {kPinned, Qt::SolidPattern, tr("pinned (outline)")}};
}

void LayoutMapView::paintLegend(QPainter& painter) const
{
    int x = kMargin;
    const int y = kMargin - verticalScrollBar()->value();
    const QFontMetrics metrics = painter.fontMetrics();
    for (const LegendEntry& entry : legend()) {
        painter.fillRect(QRect(x, y + 3, 12, 12), QBrush(entry.color, entry.style));
        x += 16;
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(QPoint(x, y + 3 + metrics.ascent() - 1), entry.text);
        x += metrics.horizontalAdvance(entry.text) + 14;
    }
}

void LayoutMapView::paintFile(QPainter& painter, int file, int top) const
{
    const repack::FileLayout& layout = m_files[file];
    const double ppb = pixelsPerByte();
    const int scroll = horizontalScrollBar()->value();
    const int width = viewport()->width();

    QString title = QString::fromStdString(layout.location) + QStringLiteral("  ·  ")
        + formatBytes(layout.bytes);
    if (layout.paddingBytes)
        title += QStringLiteral("  ·  ")
            + tr("padding %1 (%2 alignment)")
                  .arg(formatBytes(layout.paddingBytes), formatBytes(layout.alignment));
    if (layout.orphanedBytes)
        title += QStringLiteral("  ·  ") + tr("orphaned %1").arg(formatBytes(layout.orphanedBytes));
    if (layout.overlappingBytes)
        title += QStringLiteral("  ·  ")
            + tr("overlapping %1").arg(formatBytes(layout.overlappingBytes));
    if (const uint64_t missing = missingBytes(file))
        title += QStringLiteral("  ·  ") + tr("missing %1 past its end").arg(formatBytes(missing));
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QRect(kMargin, top - kTitleHeight, width - 2 * kMargin, kTitleHeight - 3),
        Qt::AlignLeft | Qt::AlignBottom, title);

    const double fileEnd = kMargin + layout.bytes * ppb - scroll;
    painter.fillRect(QRectF(kMargin - scroll, top, fileEnd - (kMargin - scroll), kBandHeight),
        kPadding.lighter(115));

    // Many blocks fall into the same pixel column when zoomed out: draw each column once.
    int lastPixel = -1;
    for (const repack::Region& region : layout.regions) {
        const double x0 = kMargin + region.offset * ppb - scroll;
        const double x1 = x0 + region.length * ppb;
        if (x1 < 0 || x0 > width)
            continue;
        const bool overlap = region.type == repack::RegionType::Overlap;
        if (!overlap && int(x1) <= lastPixel)
            continue;
        const bool selected
            = region.type == repack::RegionType::Tensor && isHighlighted(region.tensor);
        QRectF rect(x0, top, std::max(1.0, x1 - x0), kBandHeight);
        if (region.type == repack::RegionType::Padding)
            painter.fillRect(rect, QBrush(kPadding.darker(130), Qt::BDiagPattern));
        else
            painter.fillRect(
                rect, selected ? kSelected : colors::regionColor(region.type, region.tensor));
        if (region.type == repack::RegionType::Tensor && rect.width() >= 4)
            painter.fillRect(QRectF(x1 - 1, top, 1, kBandHeight), palette().color(QPalette::Base));
        if (!overlap)
            lastPixel = int(x1);
    }
    // Selected blocks again on top, so a selection stays visible when zoomed out.
    for (const repack::Region& region : layout.regions) {
        if (region.type != repack::RegionType::Tensor || !isHighlighted(region.tensor))
            continue;
        const double x0 = kMargin + region.offset * ppb - scroll;
        const double x1 = x0 + region.length * ppb;
        if (x1 >= 0 && x0 <= width)
            painter.fillRect(QRectF(x0, top, std::max(2.0, x1 - x0), kBandHeight), kSelected);
    }
    // Pinned blocks outlined: the plan moves them on the next save.
    if (m_placement && m_placement->pinnedCount() > 0) {
        painter.setPen(QPen(kPinned, 2));
        painter.setBrush(Qt::NoBrush);
        for (const repack::Region& region : layout.regions) {
            if (region.type != repack::RegionType::Tensor || !m_placement->isPinned(region.tensor))
                continue;
            const double x0 = kMargin + region.offset * ppb - scroll;
            const double x1 = x0 + region.length * ppb;
            if (x1 >= 0 && x0 <= width)
                painter.drawRect(
                    QRectF(x0 + 1, top + 1, std::max(2.0, x1 - x0 - 2), kBandHeight - 2));
        }
    }
    painter.setPen(palette().color(QPalette::Mid));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(QRectF(kMargin - scroll, top, layout.bytes * ppb, kBandHeight));
    // What tensors read past the end: dashed red, beyond the file's bar.
    painter.setPen(QPen(colors::kOverlap, 1, Qt::DashLine));
    for (const Missing& m : m_missing[size_t(file)]) {
        const double x0 = kMargin + m.offset * ppb - scroll;
        const QRectF rect(x0, top + 1, std::max(2.0, m.length * ppb), kBandHeight - 2);
        painter.fillRect(rect, QBrush(colors::kOverlap.lighter(170), Qt::Dense6Pattern));
        painter.drawRect(rect);
    }
}

void LayoutMapView::setLoadError(const QString& error)
{
    if (!m_modelPath.isEmpty())
        return; // the model shown stays; its map is still true
    m_loadError = error;
    viewport()->update();
}

QString LayoutMapView::placeholderText() const
{
    if (m_modelPath.isEmpty())
        return m_loadError.isEmpty() ? tr("No model") : tr("Cannot open: %1").arg(m_loadError);
    if (m_files.empty())
        return tr("No external data: every tensor is stored inside the .onnx file.");
    return {};
}

void LayoutMapView::paintEvent(QPaintEvent*)
{
    QPainter painter(viewport());
    if (const QString placeholder = placeholderText(); !placeholder.isEmpty()) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(viewport()->rect().adjusted(kMargin, 0, -kMargin, 0),
            Qt::AlignCenter | Qt::TextWordWrap, placeholder);
        return;
    }
    paintLegend(painter);
    for (int f = 0; f < int(m_files.size()); ++f) {
        const int top = bandTop(f);
        if (top + kBandHeight < 0 || top - kTitleHeight > viewport()->height())
            continue;
        paintFile(painter, f, top);
    }
}

} // namespace ui
