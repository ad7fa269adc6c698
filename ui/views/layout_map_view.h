// The byte map of every external data file: one horizontal band per file, tensors drawn as
// blocks proportional to their length, alignment padding hatched, orphaned gaps in amber,
// overlaps in red. It shares the tensor table's QItemSelectionModel: clicking a block selects
// that row there, and the highlighted blocks are read back from the same selection model, so
// the two views never have to keep copies of the selection in step. Selected blocks drag as
// tensor rows (TensorTableModel::kMimeType); rows dropped on a file's band are pinned there;
// pinned tensors are outlined. A file's context menu offers to compact it (its orphaned bytes).
#pragma once

#include "core/plan/file_layout.h"
#include "layout_palette.h"
#include "ui/models/model_snapshot.h"
#include "ui/models/tensor_selection.h"

#include <QAbstractScrollArea>
#include <QPointer>

#include <vector>

class QAbstractProxyModel;
class QItemSelectionModel;
class QMimeData;

namespace ui {

class PlacementState;

class LayoutMapView : public QAbstractScrollArea {
    Q_OBJECT
public:
    explicit LayoutMapView(QWidget* parent = nullptr);

    void setSnapshot(const ModelSnapshot& snapshot);
    // The swatches drawn above the files, in the colours the files are drawn in.
    static QList<LegendEntry> legend();
    // While no model is shown: `error` (why the last open failed) instead of "No model".
    void setLoadError(const QString& error);
    // What the map says instead of drawing files: "No model", the load error, "No external
    // data: ..." for a model without data files, or empty when it draws files.
    QString placeholderText() const;
    // `selection` selects rows of `proxy`, whose source rows are tensor indices.
    void setSelectionModel(QItemSelectionModel* selection, QAbstractProxyModel* proxy);
    // Pinned tensors get an outline; the map repaints when pins change.
    void setPlacementState(const PlacementState* state);

    double zoom() const { return m_zoom; }
    // The files drawn, as counted (padding against their alignment).
    const std::vector<repack::FileLayout>& files() const { return m_files; }
    // The tensor drawn at `pos` (viewport coordinates), or -1.
    int tensorAt(QPoint pos) const;
    // Centre of the first block of `tensor` in viewport coordinates (for tests), or (-1, -1).
    QPoint blockCenter(int tensor) const;
    bool isHighlighted(int tensor) const;
    // The data file whose band is at `pos` (viewport coordinates), or an empty string.
    QString fileAt(QPoint pos) const;
    // A point inside the band of data file `location` (for tests), or (-1, -1).
    QPoint fileBandPoint(const QString& location) const;
    // Bytes the tensors of data file `file` read past its end (a file cut short): drawn as
    // missing after the file's bar.
    uint64_t missingBytes(int file) const;
    // The tooltip of byte `byte` of data file `file` (past its end too), for tests.
    QString toolTipAtByte(int file, uint64_t byte) const;
    // What dragging the selected blocks carries (new, for the caller), or null.
    QMimeData* dragMimeData() const;

    QSize sizeHint() const override;

public Q_SLOTS:
    void zoomToFit();
    void setZoom(double zoom, int anchorX = 0);

Q_SIGNALS:
    // A block was clicked whose row the table's filter hides.
    void hiddenTensorClicked(int tensor);
    // Tensor rows were dropped on the band of data file `location`.
    void tensorsDropped(const QList<int>& tensors, const QString& location);
    // "Compact <file>" was chosen in the context menu of data file `location`'s band.
    void compactRequested(const QString& location);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    bool viewportEvent(QEvent* event) override;

private:
    struct Hit {
        int file = -1;
        int region = -1;
    };
    struct Place {
        int file = -1;
        int region = -1;
    };

    double pixelsPerByte() const;
    int bandTop(int file) const;
    Hit hitTest(QPoint pos) const;
    // The file at `pos` and the byte of it under `pos` (past its end too), or file -1.
    std::pair<int, double> byteAt(QPoint pos) const;
    // The region of `file` holding byte `at` (within the file), or -1.
    int regionAt(int file, uint64_t at) const;
    QString missingToolTip(int file, uint64_t byte) const;
    QString toolTipFor(const Hit& hit) const;
    void updateScrollBars();
    void paintFile(QPainter& painter, int file, int top) const;
    void paintLegend(QPainter& painter) const;
    void startDrag();
    int fileIndexAt(QPoint pos) const;

    std::vector<repack::FileLayout> m_files;
    // Per file: the ranges tensors read past its end (a file cut short), and where the last
    // ends (the file's size when none).
    struct Missing {
        uint64_t offset = 0;
        uint64_t length = 0;
        int tensor = -1;
    };
    std::vector<std::vector<Missing>> m_missing;
    std::vector<uint64_t> m_ends;
    QList<TensorRow> m_tensors; // shared with the snapshot, for tooltips
    std::vector<Place> m_places; // where each tensor's block is, by tensor index
    uint64_t m_largestFile = 0;
    double m_zoom = 1.0;

    SelectionHighlight m_highlight;

    QString m_modelPath; // what dragged rows must come from; empty while no model is shown
    QString m_loadError;
    const PlacementState* m_placement = nullptr;
    QPoint m_pressPos{-1, -1}; // a press on a selected block: a drag may start from here
};

} // namespace ui
