// Draws a LayoutDiff: for each data file (and inline storage) its "before" bar above its "after"
// bar, tensors as ranges coloured by their kind of change, padding hatched, orphaned bytes in
// amber, and a ribbon from each tensor's old range to its new one, drawn only in the bands
// between bars: within one file it crosses the file's band; to another file it leaves through
// the band below the old range and arrives through the band above the new one, so no ribbon
// runs across another file (a model saved into 91 shards stays readable). A file on one side
// only is drawn alone, with a narrow band for its ribbons. Each lane's title (one line, elided)
// gives the change in bytes, padding and orphaned bytes; the header the change of the .onnx
// itself and how many tensors changed how.
//
// Like LayoutMapView it shares a QItemSelectionModel whose (proxy) rows map to diff tensor
// indices: clicking a range or a ribbon selects that tensor there, and what is highlighted is
// read back from the same selection model.
#pragma once

#include "layout_palette.h"
#include "ui/models/layout_diff.h"
#include "ui/models/tensor_selection.h"

#include <QAbstractScrollArea>
#include <QPainterPath>
#include <QPointer>

#include <memory>
#include <vector>

class QAbstractProxyModel;
class QItemSelectionModel;

namespace ui {

class LayoutDiffView : public QAbstractScrollArea {
    Q_OBJECT
public:
    explicit LayoutDiffView(QWidget* parent = nullptr);

    void setDiff(std::shared_ptr<const LayoutDiff> diff);
    const LayoutDiff* diff() const { return m_diff.get(); }
    // `selection` selects rows of `proxy` (or of its own model when `proxy` is null) whose
    // source rows are indices into LayoutDiff::tensors.
    void setSelectionModel(QItemSelectionModel* selection, QAbstractProxyModel* proxy = nullptr);

    // The swatches drawn under the header: the kinds of change present, with their counts,
    // then padding, orphaned and (when any) header gaps.
    QList<LegendEntry> legend() const;

    // The diff tensor drawn at `pos` (viewport coordinates: a range or a ribbon), or -1.
    int tensorAt(QPoint pos) const;
    // Centre of `tensor`'s range on one side in viewport coordinates, or (-1, -1).
    QPoint rangeCenter(int tensor, bool after) const;
    // A point inside `tensor`'s ribbon (midway between its ranges), or (-1, -1).
    QPoint ribbonPoint(int tensor) const;
    bool isHighlighted(int tensor) const;
    // Where text is drawn (the header, each file's title row, each bar's side label) and the
    // bounds of every ribbon or line drawn, in viewport coordinates: a ribbon never crosses text.
    QList<QRectF> labelRects() const;
    QList<QRectF> linkBounds() const;
    QString toolTipFor(int tensor) const;

    QSize sizeHint() const override;

Q_SIGNALS:
    void tensorClicked(int tensor);
    // A tensor was clicked whose row the selection's proxy hides.
    void hiddenTensorClicked(int tensor);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool viewportEvent(QEvent* event) override;

private:
    struct Bar {
        int lane = -1;
        bool after = false;
        int top = 0; // content coordinates
    };
    struct Block {
        QRectF rect;
        QColor color;
        Qt::BrushStyle style = Qt::SolidPattern;
    };
    // A piece of a tensor's link from its old range to its new one: a band when either range
    // is a few pixels wide, else a line (cheap to draw 100,000 of).
    struct Ribbon {
        QPainterPath path;
        QLineF line;
        ChangeKind kind = ChangeKind::Unchanged;
        int tensor = -1; // one of the tensors it stands for
    };

    // One piece of a tensor's link, drawn from the bottom of `from` to the top of `to`: the
    // whole link through its file's band (old and new range in one file), else a stub leaving
    // the old range through the band below it and one reaching the new range through the band
    // above it. So no link ever runs across another file's title or bars.
    struct LinkPiece {
        QRectF from;
        QRectF to;
        int lane = -1;
        int type = 0; // 0 through the band, 1 leaving, 2 arriving
    };

    void layoutBars();
    std::vector<LinkPiece> linkPieces(int tensor) const;
    int barTop(int lane, bool after) const;
    double xOf(int lane, uint64_t offset) const;
    QRectF rangeRect(int tensor, bool after) const; // content coordinates
    void buildCache() const;
    void paintHeader(QPainter& painter) const;
    void paintLaneTitle(QPainter& painter, int lane, int top) const;
    void updateScrollBars();
    int scrollY() const;

    std::shared_ptr<const LayoutDiff> m_diff;
    std::vector<Bar> m_bars;
    std::vector<int> m_titleTops; // per lane, -1 when the lane is empty on both sides
    std::vector<std::pair<int, int>> m_barIndex; // per lane: index in m_bars before/after, or -1
    int m_contentHeight = 0;

    mutable bool m_cacheDirty = true;
    mutable std::vector<Block> m_blocks;
    mutable std::vector<Ribbon> m_ribbons; // bands, unchanged first
    mutable std::vector<Ribbon> m_lines; // by kind

    SelectionHighlight m_highlight;
};

} // namespace ui
