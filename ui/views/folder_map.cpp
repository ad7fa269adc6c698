#include "folder_map.h"

#include "core/inspect/folder_inspect.h"
#include "core/model/model.h"
#include "layout_palette.h"
#include "ui/util/byte_format.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <map>
#include <set>

namespace ui {
namespace {

constexpr int kMargin = 8;
constexpr int kBarHeight = 22;
constexpr int kLineHeight = 18; // a line of text
constexpr int kRowGap = 10;

} // namespace

std::vector<FolderMapFile> folderMap(const repack::FolderInspection& folder)
{
    namespace fs = std::filesystem;
    // Tensors whose content more than one range holds.
    // Tensors whose content more than one range holds, and the graphs holding each content.
    std::map<std::pair<std::string, std::string>, size_t> groupOf; // model, scope/name
    std::vector<std::set<int>> groupHolders;
    std::map<std::string, int> graphOf;
    for (size_t m = 0; m < folder.models.size(); ++m)
        graphOf[folder.models[m].name] = int(m);
    for (const repack::SharedContent& content : folder.shared) {
        if (content.copies < 2)
            continue;
        std::set<int> holders;
        for (const repack::SharedTensor& t : content.tensors) {
            groupOf[{t.model, t.scope + "/" + t.name}] = groupHolders.size();
            if (auto g = graphOf.find(t.model); g != graphOf.end())
                holders.insert(g->second);
        }
        groupHolders.push_back(std::move(holders));
    }

    std::vector<FolderMapFile> files;
    std::map<fs::path, size_t> fileAt; // resolved path -> index in `files`
    for (const repack::FolderFile& f : folder.files) {
        fileAt[(folder.folder / f.location).lexically_normal()] = files.size();
        files.push_back({QString::fromStdString(f.location), f.bytes, {}});
    }
    std::vector<std::map<std::pair<uint64_t, uint64_t>, size_t>> rangeAt(files.size());
    for (size_t m = 0; m < folder.models.size(); ++m) {
        const repack::FolderModel& model = folder.models[m];
        if (!model.model)
            continue;
        for (const repack::TensorInfo& t : model.model->tensors()) {
            if (!t.isExternal() || t.hasError)
                continue;
            const auto file = fileAt.find(t.external->resolvedPath());
            if (file == fileAt.end())
                continue;
            const uint64_t length = t.external->length.value_or(t.byteSize());
            auto& ranges = files[file->second].ranges;
            auto [it, fresh] = rangeAt[file->second].emplace(
                std::make_pair(t.external->offset, length), ranges.size());
            if (fresh)
                ranges.push_back({t.external->offset, length, {}, false, {}});
            FolderMapRange& range = ranges[it->second];
            if (range.readers.empty() || range.readers.back() != int(m))
                range.readers.push_back(int(m));
            std::set<int> holders(range.holders.begin(), range.holders.end());
            holders.insert(int(m));
            if (auto group = groupOf.find({model.name, t.qualifiedName()});
                group != groupOf.end()) {
                range.duplicated = true;
                holders.insert(
                    groupHolders[group->second].begin(), groupHolders[group->second].end());
            }
            range.holders.assign(holders.begin(), holders.end());
        }
    }
    for (FolderMapFile& f : files)
        std::sort(f.ranges.begin(), f.ranges.end(),
            [](const FolderMapRange& a, const FolderMapRange& b) { return a.offset < b.offset; });
    return files;
}

QColor graphColor(int index, int count)
{
    const int hue = count > 0 ? (210 + index * 360 / std::max(count, 1)) % 360 : 210;
    return QColor::fromHsv(hue, 150, 205);
}

FolderMapView::FolderMapView(QWidget* parent)
    : QWidget(parent)
{
    setMinimumHeight(kMargin * 2 + kLineHeight + kBarHeight);
    setToolTip(tr("Each data file's byte ranges in the colours of the graphs that read them; "
                  "hatched: content stored more than once in the folder"));
}

void FolderMapView::setFolder(const std::shared_ptr<const repack::FolderInspection>& folder)
{
    m_files = folder ? folderMap(*folder) : std::vector<FolderMapFile>{};
    m_selected = {SIZE_MAX, SIZE_MAX};
    m_graphs.clear();
    if (folder)
        for (const repack::FolderModel& m : folder->models)
            m_graphs << QString::fromStdString(m.name);
    // Room for up to three files in the window's splitter, however it was sized before.
    const int rows = std::min<int>(3, int(m_files.size()));
    setMinimumHeight(kMargin * 2 + kLineHeight + rows * (kLineHeight + kBarHeight + kRowGap));
    updateGeometry();
    update();
}

QSize FolderMapView::sizeHint() const
{
    const int rows = int(m_files.size());
    return {480, kMargin * 2 + kLineHeight + rows * (kLineHeight + kBarHeight + kRowGap)};
}

QRect FolderMapView::barRect(size_t file) const
{
    const int row = kLineHeight + kBarHeight + kRowGap;
    const int y = kMargin + kLineHeight + int(file) * row + kRowGap / 2 + kLineHeight;
    return {kMargin, y, std::max(1, width() - 2 * kMargin), kBarHeight};
}

QRect FolderMapView::rangeRect(size_t file, size_t range) const
{
    const QRect bar = barRect(file);
    const FolderMapFile& f = m_files[file];
    const FolderMapRange& r = f.ranges[range];
    const double scale = f.bytes ? double(bar.width()) / double(f.bytes) : 0.0;
    const int x0 = bar.left() + int(double(r.offset) * scale);
    const int x1 = bar.left() + int(double(r.offset + r.length) * scale);
    return {x0, bar.top(), std::max(1, std::min(x1, bar.right() + 1) - x0), bar.height()};
}

void FolderMapView::mousePressEvent(QMouseEvent* event)
{
    for (size_t f = 0; f < m_files.size(); ++f)
        for (size_t r = 0; r < m_files[f].ranges.size(); ++r)
            if (rangeRect(f, r).contains(event->position().toPoint())) {
                m_selected = {f, r};
                update();
                Q_EMIT rangeClicked(m_files[f].ranges[r].holders);
                return;
            }
    QWidget::mousePressEvent(event);
}

void FolderMapView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    const int y = kMargin;
    // The legend: one swatch a graph.
    int x = kMargin;
    const int count = int(m_graphs.size());
    for (int g = 0; g < count; ++g) {
        p.fillRect(x, y + 4, 12, 12, graphColor(g, count));
        x += 16;
        p.setPen(palette().text().color());
        p.drawText(x, y + kLineHeight - 4, m_graphs[g]);
        x += p.fontMetrics().horizontalAdvance(m_graphs[g]) + 14;
    }
    for (size_t file = 0; file < m_files.size(); ++file) {
        const FolderMapFile& f = m_files[file];
        const QRect bar = barRect(file);
        p.setPen(palette().text().color());
        p.drawText(kMargin, bar.top() - 4,
            f.location + QStringLiteral("  ") + formatBytes(f.bytes)
                + (f.ranges.empty() ? tr("  (read by no graph)") : QString()));
        p.fillRect(bar, colors::kPadding);
        for (size_t range = 0; range < f.ranges.size(); ++range) {
            const FolderMapRange& r = f.ranges[range];
            const QRect place = rangeRect(file, range);
            const int bands = std::max<int>(1, int(r.readers.size()));
            for (int b = 0; b < bands; ++b) {
                const int top = bar.top() + b * kBarHeight / bands;
                const int bottom = bar.top() + (b + 1) * kBarHeight / bands;
                const QColor color = r.readers.empty() ? colors::kPadding
                                                       : graphColor(r.readers[size_t(b)], count);
                p.fillRect(place.left(), top, place.width(), bottom - top, color);
            }
            if (r.duplicated)
                p.fillRect(place, QBrush(colors::kOverlap, Qt::BDiagPattern));
            if (place.width() > 3) // the seam between two ranges
                p.fillRect(place.left(), bar.top(), 1, kBarHeight, palette().base());
        }
        p.setPen(palette().mid().color());
        p.drawRect(bar.adjusted(0, 0, -1, -1));
        if (m_selected.first == file && m_selected.second < f.ranges.size()) {
            p.setPen(QPen(colors::kSelected, 3));
            p.drawRect(rangeRect(file, m_selected.second).adjusted(1, 1, -2, -2));
        }
    }
}

} // namespace ui
