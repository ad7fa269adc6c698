#include "layout_diff_view.h"

#include "layout_palette.h"
#include "ui/util/byte_format.h"

#include <QAbstractProxyModel>
#include <QItemSelectionModel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QSet>

#include <algorithm>

#include <cmath>

namespace ui {
namespace {

constexpr int kMargin = 10;
constexpr int kHeaderHeight = 46;
constexpr int kTitleHeight = 20;
constexpr int kBarHeight = 22;
constexpr int kRibbonGap = 40;
constexpr int kStubGap = 12; // the band a file on one side only gets for its links
constexpr int kLaneSpacing = 14;
constexpr int kGutter = 64;
constexpr size_t kMaxHighlighted = 20000; // more selected tensors are outlined only in the table

using colors::changeColor;
using colors::kSelected;

// Which colour wins where several tensors share a pixel: the rarer, more telling change.
constexpr int kPriority[kChangeKindCount] = {0, 1, 3, 4, 2, 5, 6, 7};

QString signedBytes(uint64_t before, uint64_t after)
{
    if (after == before)
        return QStringLiteral("±0");
    if (after > before)
        return u'+' + formatBytes(after - before);
    return QStringLiteral("−") + formatBytes(before - after);
}

QString fromTo(uint64_t before, uint64_t after)
{
    return formatBytes(before) + QStringLiteral(" → ") + formatBytes(after);
}

QString placeText(const DiffPlace& place)
{
    if (place.row < 0)
        return LayoutDiffView::tr("(none)");
    if (!place.external)
        return LayoutDiffView::tr("inline, %1").arg(formatBytes(place.length));
    return LayoutDiffView::tr("%1 @ %2, %3")
        .arg(place.storage)
        .arg(place.offset)
        .arg(formatBytes(place.length));
}

} // namespace

LayoutDiffView::LayoutDiffView(QWidget* parent)
    : QAbstractScrollArea(parent)
{
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    viewport()->setMouseTracking(true);
    viewport()->setBackgroundRole(QPalette::Base);
    setMinimumHeight(kHeaderHeight + kTitleHeight + 2 * kBarHeight + 2 * kMargin);
}

void LayoutDiffView::setDiff(std::shared_ptr<const LayoutDiff> diff)
{
    m_diff = std::move(diff);
    m_cacheDirty = true;
    m_highlight.setTensorCount(m_diff ? m_diff->tensors.size() : 0);
    layoutBars();
    updateScrollBars();
    viewport()->update();
}

void LayoutDiffView::setSelectionModel(QItemSelectionModel* selection, QAbstractProxyModel* proxy)
{
    m_highlight.follow(selection, proxy, this, [this] { viewport()->update(); });
    viewport()->update();
}

void LayoutDiffView::layoutBars()
{
    m_bars.clear();
    m_titleTops.clear();
    m_barIndex.clear();
    int y = kMargin + kHeaderHeight;
    if (m_diff) {
        for (size_t l = 0; l < m_diff->lanes.size(); ++l) {
            const DiffLane& lane = m_diff->lanes[l];
            std::pair<int, int> index{-1, -1};
            if (!lane.before.present && !lane.after.present) {
                m_titleTops.push_back(-1);
                m_barIndex.push_back(index);
                continue;
            }
            m_titleTops.push_back(y);
            y += kTitleHeight;
            if (!lane.before.present)
                y += kStubGap; // links arrive from above
            if (lane.before.present) {
                index.first = int(m_bars.size());
                m_bars.push_back({int(l), false, y});
                y += kBarHeight;
            }
            if (lane.before.present && lane.after.present)
                y += kRibbonGap;
            else if (lane.before.present)
                y += kStubGap; // links leave downwards
            if (lane.after.present) {
                index.second = int(m_bars.size());
                m_bars.push_back({int(l), true, y});
                y += kBarHeight;
            }
            m_barIndex.push_back(index);
            y += kLaneSpacing;
        }
    }
    m_contentHeight = y + kMargin;
}

int LayoutDiffView::barTop(int lane, bool after) const
{
    if (lane < 0 || size_t(lane) >= m_barIndex.size())
        return -1;
    const int bar = after ? m_barIndex[size_t(lane)].second : m_barIndex[size_t(lane)].first;
    return bar < 0 ? -1 : m_bars[size_t(bar)].top;
}

double LayoutDiffView::xOf(int lane, uint64_t offset) const
{
    const DiffLane& l = m_diff->lanes[size_t(lane)];
    const double scale = double(std::max<uint64_t>({l.before.bytes, l.after.bytes, 1}));
    const double width = std::max(10, viewport()->width() - kGutter - kMargin);
    return kGutter + width * double(offset) / scale;
}

QRectF LayoutDiffView::rangeRect(int tensor, bool after) const
{
    if (!m_diff || tensor < 0 || size_t(tensor) >= m_diff->tensors.size())
        return {};
    const DiffTensor& t = m_diff->tensors[size_t(tensor)];
    const DiffPlace& place = after ? t.after : t.before;
    const int top = barTop(place.lane, after);
    if (top < 0)
        return {};
    const double x0 = xOf(place.lane, place.offset);
    const double x1 = std::max(x0 + 1, xOf(place.lane, place.offset + place.length));
    return QRectF(x0, top, x1 - x0, kBarHeight);
}

namespace {

// From the bottom of `from` down to the top of `to`.
QPainterPath ribbonPath(const QRectF& from, const QRectF& to)
{
    const double y0 = from.bottom();
    const double y1 = to.top();
    const double mid = (y0 + y1) / 2;
    QPainterPath path;
    path.moveTo(from.left(), y0);
    path.cubicTo(from.left(), mid, to.left(), mid, to.left(), y1);
    path.lineTo(to.right(), y1);
    path.cubicTo(to.right(), mid, from.right(), mid, from.right(), y0);
    path.closeSubpath();
    return path;
}

} // namespace

std::vector<LayoutDiffView::LinkPiece> LayoutDiffView::linkPieces(int tensor) const
{
    const QRectF from = rangeRect(tensor, false);
    const QRectF to = rangeRect(tensor, true);
    if (from.isNull() || to.isNull())
        return {};
    const DiffTensor& t = m_diff->tensors[size_t(tensor)];
    if (t.before.lane == t.after.lane) // its "before" bar is right above its "after" bar
        return {{from, to, t.before.lane, 0}};
    return {
        {from, QRectF(from.left(), from.bottom() + kStubGap, from.width(), 0), t.before.lane, 1},
        {QRectF(to.left(), to.top() - kStubGap, to.width(), 0), to, t.after.lane, 2}};
}

void LayoutDiffView::buildCache() const
{
    if (!m_cacheDirty)
        return;
    m_cacheDirty = false;
    m_blocks.clear();
    m_ribbons.clear();
    m_lines.clear();
    if (!m_diff)
        return;
    // Ranges narrower than a few pixels share pixel columns: each column takes the colour of
    // the most telling change in it, so 100,000 tensors draw as at most a bar's width of blocks.
    for (const Bar& bar : m_bars) {
        const DiffLane& lane = m_diff->lanes[size_t(bar.lane)];
        const LaneSide& side = bar.after ? lane.after : lane.before;
        for (const DiffGap& gap : side.gaps) {
            const double x0 = xOf(bar.lane, gap.offset);
            const double x1 = std::max(x0 + 1, xOf(bar.lane, gap.offset + gap.length));
            m_blocks.push_back({QRectF(x0, bar.top, x1 - x0, kBarHeight), colors::gapColor(gap),
                gap.orphaned || gap.header ? Qt::SolidPattern : Qt::BDiagPattern});
        }
        const int left = kGutter;
        std::vector<int> column(size_t(std::max(1, viewport()->width() - left + 2)), -1);
        for (int t : side.tensors) {
            const QRectF r = rangeRect(t, bar.after);
            const ChangeKind kind = m_diff->tensors[size_t(t)].kind;
            if (r.width() >= 3) {
                m_blocks.push_back({r, changeColor(kind), Qt::SolidPattern});
                continue;
            }
            const int c0 = std::clamp(int(std::floor(r.left())) - left, 0, int(column.size()) - 1);
            const int c1 = std::clamp(int(std::ceil(r.right())) - left, c0 + 1, int(column.size()));
            for (int c = c0; c < c1; ++c) {
                if (column[size_t(c)] < 0 || kPriority[int(kind)] > kPriority[column[size_t(c)]])
                    column[size_t(c)] = int(kind);
            }
        }
        for (size_t c = 0; c < column.size();) {
            const int kind = column[c];
            size_t end = c + 1;
            while (end < column.size() && column[end] == kind)
                ++end;
            if (kind >= 0)
                m_blocks.push_back({QRectF(left + double(c), bar.top, double(end - c), kBarHeight),
                    changeColor(ChangeKind(kind)), Qt::SolidPattern});
            c = end;
        }
    }
    // One piece per distinct place, pair of pixel positions and kind; unchanged ones first
    // (under).
    QSet<quint64> seen;
    std::vector<Ribbon> changed;
    for (size_t t = 0; t < m_diff->tensors.size(); ++t) {
        const DiffTensor& tensor = m_diff->tensors[t];
        for (const LinkPiece& piece : linkPieces(int(t))) {
            const QRectF& from = piece.from;
            const QRectF& to = piece.to;
            if (from.width() < 3 && to.width() < 3) {
                const quint64 key = (quint64(piece.type) << 58)
                    | (quint64(piece.lane & 0x3fff) << 44)
                    | (quint64(int(from.left()) & 0xfffff) << 24)
                    | (quint64(int(to.left()) & 0xfffff) << 4) | quint64(tensor.kind);
                if (seen.contains(key))
                    continue;
                seen.insert(key);
                m_lines.push_back(
                    {{}, QLineF(from.center().x(), from.bottom(), to.center().x(), to.top()),
                        tensor.kind, int(t)});
                continue;
            }
            Ribbon ribbon{ribbonPath(from, to), {}, tensor.kind, int(t)};
            (tensor.kind == ChangeKind::Unchanged ? m_ribbons : changed)
                .push_back(std::move(ribbon));
        }
    }
    m_ribbons.insert(m_ribbons.end(), std::make_move_iterator(changed.begin()),
        std::make_move_iterator(changed.end()));
    std::stable_sort(m_lines.begin(), m_lines.end(),
        [](const Ribbon& x, const Ribbon& y) { return int(x.kind) < int(y.kind); });
}

bool LayoutDiffView::isHighlighted(int tensor) const
{
    return m_highlight.isHighlighted(tensor);
}

int LayoutDiffView::scrollY() const
{
    return verticalScrollBar()->value();
}

void LayoutDiffView::paintHeader(QPainter& painter) const
{
    const QFontMetrics fm = painter.fontMetrics();
    int x = kMargin;
    int y = kMargin + fm.ascent();
    QString protobuf = tr("Protobuf (.onnx) %1 (%2)")
                           .arg(fromTo(m_diff->protobufBefore, m_diff->protobufAfter),
                               signedBytes(m_diff->protobufBefore, m_diff->protobufAfter));
    if (m_diff->protobufAfterEstimated)
        protobuf += tr(", estimated");
    QFont bold = painter.font();
    bold.setBold(true);
    painter.setFont(bold);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(x, y, m_diff->beforeTitle + QStringLiteral(" → ") + m_diff->afterTitle);
    x += QFontMetrics(bold).horizontalAdvance(
             m_diff->beforeTitle + QStringLiteral(" → ") + m_diff->afterTitle)
        + 16;
    painter.setFont(font());
    painter.drawText(x, y, protobuf);

    x = kMargin;
    y += fm.height() + 6;
    for (const LegendEntry& entry : legend()) {
        const QRect box(x, y - fm.ascent() + 1, 12, fm.ascent() - 1);
        painter.fillRect(box, QBrush(entry.color, entry.style));
        painter.setPen(entry.color.darker(130));
        painter.drawRect(box);
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(x + 16, y, entry.text);
        x += 16 + fm.horizontalAdvance(entry.text) + 14;
    }
}

QList<LegendEntry> LayoutDiffView::legend() const
{
    // Every kind present, with its count, then padding and orphaned (and headers, if any).
    QList<LegendEntry> entries;
    if (!m_diff)
        return entries;
    std::vector<size_t> counts(kChangeKindCount, 0);
    for (const DiffTensor& t : m_diff->tensors)
        ++counts[size_t(t.kind)];
    for (int k = 0; k < kChangeKindCount; ++k) {
        if (counts[size_t(k)])
            entries.append({changeColor(ChangeKind(k)), Qt::SolidPattern,
                QStringLiteral("%1 %2").arg(changeKindName(ChangeKind(k))).arg(counts[size_t(k)])});
    }
    DiffGap gap;
    entries.append({colors::gapColor(gap), Qt::BDiagPattern, tr("padding")});
    gap.orphaned = true;
    entries.append({colors::gapColor(gap), Qt::SolidPattern, tr("orphaned")});
    const auto hasHeader = [](const LaneSide& side) {
        return std::any_of(
            side.gaps.begin(), side.gaps.end(), [](const DiffGap& g) { return g.header; });
    };
    if (std::any_of(m_diff->lanes.begin(), m_diff->lanes.end(),
            [&](const DiffLane& l) { return hasHeader(l.before) || hasHeader(l.after); })) {
        gap.header = true;
        entries.append({colors::gapColor(gap), Qt::SolidPattern, tr("safetensors header")});
    }
    return entries;
}

void LayoutDiffView::paintLaneTitle(QPainter& painter, int lane, int top) const
{
    const DiffLane& l = m_diff->lanes[size_t(lane)];
    const QFontMetrics fm = painter.fontMetrics();
    const int y = top + fm.ascent() + 2;
    QFont bold = font();
    bold.setBold(true);
    // One line each, elided to the width: a narrow view cuts a title short, never wraps it.
    const int right = viewport()->width() - kMargin;
    const QString name = QFontMetrics(bold).elidedText(
        l.isInline ? tr("inline (in the .onnx)") : l.location, Qt::ElideMiddle, right - kMargin);
    painter.setFont(bold);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(kMargin, y, name);
    int x = kMargin + QFontMetrics(bold).horizontalAdvance(name) + 14;
    painter.setFont(font());
    QString text;
    if (l.before.present && l.after.present) {
        text = tr("%1 (%2)").arg(
            fromTo(l.before.bytes, l.after.bytes), signedBytes(l.before.bytes, l.after.bytes));
        if (!l.isInline)
            text += tr("    padding %1    orphaned %2")
                        .arg(fromTo(l.before.padding, l.after.padding),
                            fromTo(l.before.orphaned, l.after.orphaned));
    } else if (l.before.present) {
        text = tr("only %1: %2").arg(m_diff->beforeTitle, formatBytes(l.before.bytes));
    } else {
        text = tr("only %1: %2").arg(m_diff->afterTitle, formatBytes(l.after.bytes));
        if (!l.isInline)
            text += tr(", padding %1").arg(formatBytes(l.after.padding));
    }
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(x, y, fm.elidedText(text, Qt::ElideRight, std::max(0, right - x)));
}

void LayoutDiffView::paintEvent(QPaintEvent*)
{
    QPainter painter(viewport());
    if (!m_diff) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(viewport()->rect(), Qt::AlignCenter, tr("No layouts to compare"));
        return;
    }
    buildCache();
    const std::vector<int>& highlighted = m_highlight.highlighted();
    painter.translate(0, -scrollY());
    // Ribbons first, under the bars they start and end at.
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setPen(Qt::NoPen);
    for (const Ribbon& ribbon : m_ribbons) {
        QColor color = changeColor(ribbon.kind);
        color.setAlpha(ribbon.kind == ChangeKind::Unchanged ? 40 : 90);
        painter.setBrush(color);
        painter.drawPath(ribbon.path);
    }
    painter.setRenderHint(QPainter::Antialiasing, false);
    for (size_t i = 0; i < m_lines.size();) {
        const ChangeKind kind = m_lines[i].kind;
        QList<QLineF> lines;
        for (; i < m_lines.size() && m_lines[i].kind == kind; ++i)
            lines.append(m_lines[i].line);
        QColor color = changeColor(kind);
        color.setAlpha(kind == ChangeKind::Unchanged ? 60 : 150);
        painter.setPen(color);
        painter.drawLines(lines);
    }
    painter.setPen(Qt::NoPen);
    painter.setRenderHint(QPainter::Antialiasing, true);
    // The selected tensors' ribbons over the others, still under the bars.
    const size_t shown = std::min(highlighted.size(), kMaxHighlighted);
    QColor ribbonColor = kSelected;
    ribbonColor.setAlpha(140);
    painter.setBrush(ribbonColor);
    for (size_t i = 0; i < shown; ++i) {
        for (const LinkPiece& piece : linkPieces(highlighted[i]))
            painter.drawPath(ribbonPath(piece.from, piece.to));
    }
    painter.setBrush(Qt::NoBrush);
    paintHeader(painter);
    for (size_t l = 0; l < m_titleTops.size(); ++l) {
        if (m_titleTops[l] >= 0)
            paintLaneTitle(painter, int(l), m_titleTops[l]);
    }
    const QColor base = palette().color(QPalette::AlternateBase);
    const QColor frame = palette().color(QPalette::Mid);
    for (const Bar& bar : m_bars) {
        const double right = xOf(bar.lane,
            std::max(m_diff->lanes[size_t(bar.lane)].before.bytes,
                m_diff->lanes[size_t(bar.lane)].after.bytes));
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(QRect(kMargin, bar.top, kGutter - kMargin - 6, kBarHeight),
            Qt::AlignRight | Qt::AlignVCenter,
            bar.after ? m_diff->afterTitle : m_diff->beforeTitle);
        painter.fillRect(QRectF(kGutter, bar.top, right - kGutter, kBarHeight), base);
    }
    painter.setRenderHint(QPainter::Antialiasing, false);
    for (const Block& block : m_blocks) {
        painter.fillRect(block.rect, QBrush(block.color, block.style));
        if (block.style == Qt::SolidPattern && block.rect.width() >= 3) {
            painter.setPen(block.color.darker(135));
            painter.drawRect(block.rect.adjusted(0, 0, -1, -1));
        }
    }
    for (const Bar& bar : m_bars) {
        const double right = xOf(bar.lane,
            std::max(m_diff->lanes[size_t(bar.lane)].before.bytes,
                m_diff->lanes[size_t(bar.lane)].after.bytes));
        painter.setPen(frame);
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(QRectF(kGutter, bar.top, right - kGutter, kBarHeight));
    }
    painter.setRenderHint(QPainter::Antialiasing, true);
    // The selected ranges outlined on top.
    painter.setPen(QPen(kSelected.darker(120), 2));
    for (size_t i = 0; i < shown; ++i) {
        const int t = highlighted[i];
        for (const QRectF& r : {rangeRect(t, false), rangeRect(t, true)}) {
            if (!r.isNull())
                painter.drawRect(r.adjusted(-1, -1, 1, 1));
        }
    }
}

int LayoutDiffView::tensorAt(QPoint pos) const
{
    if (!m_diff)
        return -1;
    const double x = pos.x();
    const int y = pos.y() + scrollY();
    for (const Bar& bar : m_bars) {
        if (y < bar.top || y >= bar.top + kBarHeight)
            continue;
        const DiffLane& lane = m_diff->lanes[size_t(bar.lane)];
        const LaneSide& side = bar.after ? lane.after : lane.before;
        const auto placeOf = [&](int t) -> const DiffPlace& {
            return bar.after ? m_diff->tensors[size_t(t)].after : m_diff->tensors[size_t(t)].before;
        };
        // The first range starting after x; the one before it may hold x (or be within a pixel).
        auto it = std::upper_bound(side.tensors.begin(), side.tensors.end(), x,
            [&](double px, int t) { return px < xOf(bar.lane, placeOf(t).offset); });
        int best = -1;
        double bestDistance = 2;
        for (auto candidate = it; candidate != side.tensors.begin();) {
            --candidate;
            const QRectF r = rangeRect(*candidate, bar.after);
            const double distance
                = x < r.left() ? r.left() - x : (x > r.right() ? x - r.right() : 0);
            if (distance < bestDistance) {
                best = *candidate;
                bestDistance = distance;
            }
            if (r.right() < x - 2)
                break;
        }
        if (it != side.tensors.end()) {
            const QRectF r = rangeRect(*it, bar.after);
            if (r.left() - x < bestDistance)
                best = *it;
        }
        return best;
    }
    buildCache();
    const QPointF point(x, y);
    for (auto it = m_ribbons.rbegin(); it != m_ribbons.rend(); ++it) {
        if (it->path.contains(point))
            return it->tensor;
    }
    // The nearest line within 2 pixels.
    int best = -1;
    double bestDistance = 2;
    for (const Ribbon& ribbon : m_lines) {
        const QLineF& l = ribbon.line;
        if (y < std::min(l.y1(), l.y2()) - 2 || y > std::max(l.y1(), l.y2()) + 2)
            continue;
        const QPointF d = l.p2() - l.p1();
        const double len2 = d.x() * d.x() + d.y() * d.y();
        const double u
            = len2 > 0 ? std::clamp(QPointF::dotProduct(point - l.p1(), d) / len2, 0.0, 1.0) : 0.0;
        const QPointF nearest = l.p1() + u * d;
        const double distance = std::hypot(point.x() - nearest.x(), point.y() - nearest.y());
        if (distance <= bestDistance) {
            best = ribbon.tensor;
            bestDistance = distance;
        }
    }
    return best;
}

QPoint LayoutDiffView::rangeCenter(int tensor, bool after) const
{
    const QRectF r = rangeRect(tensor, after);
    if (r.isNull())
        return {-1, -1};
    return QPoint(int(r.center().x()), int(r.center().y()) - scrollY());
}

QPoint LayoutDiffView::ribbonPoint(int tensor) const
{
    const std::vector<LinkPiece> pieces = linkPieces(tensor);
    if (pieces.empty())
        return {-1, -1};
    const LinkPiece& piece = pieces.front();
    return QPoint(int((piece.from.center().x() + piece.to.center().x()) / 2),
        int((piece.from.bottom() + piece.to.top()) / 2) - scrollY());
}

QList<QRectF> LayoutDiffView::labelRects() const
{
    QList<QRectF> rects;
    if (!m_diff)
        return rects;
    const double width = viewport()->width();
    const double y = -scrollY();
    rects.append(QRectF(0, kMargin + y, width, kHeaderHeight));
    for (int top : m_titleTops) {
        if (top >= 0)
            rects.append(QRectF(0, top + y, width, kTitleHeight));
    }
    for (const Bar& bar : m_bars)
        rects.append(QRectF(kMargin, bar.top + y, kGutter - kMargin - 6, kBarHeight));
    return rects;
}

QList<QRectF> LayoutDiffView::linkBounds() const
{
    buildCache();
    QList<QRectF> bounds;
    const QPointF scroll(0, -scrollY());
    for (const Ribbon& ribbon : m_ribbons)
        bounds.append(ribbon.path.boundingRect().translated(scroll));
    for (const Ribbon& line : m_lines)
        bounds.append( // a line's width, so a vertical one has an area
            QRectF(line.line.p1(), line.line.p2())
                .normalized()
                .adjusted(-0.5, 0, 0.5, 0)
                .translated(scroll));
    return bounds;
}

QString LayoutDiffView::toolTipFor(int tensor) const
{
    if (!m_diff || tensor < 0 || size_t(tensor) >= m_diff->tensors.size())
        return {};
    const DiffTensor& t = m_diff->tensors[size_t(tensor)];
    QString text = t.name + u'\n' + tr("scope %1").arg(t.scope) + u'\n' + changeKindName(t.kind);
    if (t.contentPending)
        text += tr(" (bytes not compared yet)");
    text += u'\n' + m_diff->beforeTitle + QStringLiteral(": ") + placeText(t.before);
    text += u'\n' + m_diff->afterTitle + QStringLiteral(": ") + placeText(t.after);
    return text;
}

void LayoutDiffView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton)
        return QAbstractScrollArea::mousePressEvent(event);
    const int tensor = tensorAt(event->position().toPoint());
    if (tensor < 0)
        return;
    Q_EMIT tensorClicked(tensor);
    if (m_highlight.selection().isValid() && !m_highlight.click(tensor, event->modifiers()))
        Q_EMIT hiddenTensorClicked(tensor);
}

bool LayoutDiffView::viewportEvent(QEvent* event)
{
    if (showToolTip(event, viewport(), [this](QPoint pos) {
            const int tensor = tensorAt(pos);
            return tensor >= 0 ? toolTipFor(tensor) : QString();
        }))
        return true;
    return QAbstractScrollArea::viewportEvent(event);
}

void LayoutDiffView::resizeEvent(QResizeEvent* event)
{
    QAbstractScrollArea::resizeEvent(event);
    m_cacheDirty = true;
    updateScrollBars();
}

void LayoutDiffView::updateScrollBars()
{
    verticalScrollBar()->setPageStep(viewport()->height());
    verticalScrollBar()->setSingleStep(kBarHeight);
    verticalScrollBar()->setRange(0, std::max(0, m_contentHeight - viewport()->height()));
}

QSize LayoutDiffView::sizeHint() const
{
    return {800, std::min(m_contentHeight + 4, 600)};
}

} // namespace ui
