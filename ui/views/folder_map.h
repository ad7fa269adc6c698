// The folder window's map of its data files: each file a bar of its byte ranges, each range in
// the colours of the graphs that read it (one band per graph, so a range several graphs share
// shows all of them) and hatched where its content is stored more than once in the folder.
#pragma once

#include <QColor>
#include <QString>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <vector>

namespace repack {
struct FolderInspection;
}

namespace ui {

struct FolderMapRange {
    uint64_t offset = 0;
    uint64_t length = 0;
    std::vector<int> readers; // graphs (indexes into FolderInspection::models), ascending
    bool duplicated = false; // its content is stored in another range of the folder too
    // The graphs that hold this content, here or in another range (readers when it is stored
    // once), ascending.
    std::vector<int> holders;
};

struct FolderMapFile {
    QString location; // as the folder inspection names it
    uint64_t bytes = 0;
    std::vector<FolderMapRange> ranges; // by offset
};

// The external ranges of every graph, per data file of the folder (files that are missing or
// that no graph reads have no ranges).
std::vector<FolderMapFile> folderMap(const repack::FolderInspection& folder);

// Graph `index` of `count`: hues spread around the wheel.
QColor graphColor(int index, int count);

class FolderMapView : public QWidget {
    Q_OBJECT
public:
    explicit FolderMapView(QWidget* parent = nullptr);

    void setFolder(const std::shared_ptr<const repack::FolderInspection>& folder);
    const std::vector<FolderMapFile>& files() const { return m_files; }

    QSize sizeHint() const override;
    // Where range `range` of file `file` is drawn, for tests and tooltips.
    QRect rangeRect(size_t file, size_t range) const;

Q_SIGNALS:
    // A range was clicked: the graphs that hold its content.
    void rangeClicked(const std::vector<int>& holders);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    QRect barRect(size_t file) const;

    std::vector<FolderMapFile> m_files;
    QStringList m_graphs;
    std::pair<size_t, size_t> m_selected{SIZE_MAX, SIZE_MAX}; // file, range
};

} // namespace ui
