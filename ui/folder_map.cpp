#include "folder_map.h"

#include "byte_format.h"
#include "core/inspect/folder_inspect.h"
#include "core/model/model.h"
#include "layout_palette.h"

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
    std::set<std::pair<std::string, std::string>> duplicated; // model, scope/name
    for (const repack::SharedContent& content : folder.shared)
        if (content.copies > 1)
            for (const repack::SharedTensor& t : content.tensors)
                duplicated.insert({t.model, t.scope + "/" + t.name});

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
            const auto file = fileAt.find(t.external->resolvedPath.get());
            if (file == fileAt.end())
                continue;
            const uint64_t length = t.external->length.value_or(t.byteSize());
            auto& ranges = files[file->second].ranges;
            auto [it, fresh] = rangeAt[file->second].emplace(
                std::make_pair(t.external->offset, length), ranges.size());
            if (fresh)
                ranges.push_back({t.external->offset, length, {}, false});
            FolderMapRange& range = ranges[it->second];
            if (range.readers.empty() || range.readers.back() != int(m))
                range.readers.push_back(int(m));
            range.duplicated |= duplicated.count({model.name, t.qualifiedName()}) > 0;
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

void FolderMapView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    const int width = std::max(1, this->width() - 2 * kMargin);
    int y = kMargin;
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
    y += kLineHeight;
    for (const FolderMapFile& f : m_files) {
        y += kRowGap / 2;
        p.setPen(palette().text().color());
        p.drawText(kMargin, y + kLineHeight - 4,
            f.location + QStringLiteral("  ") + formatBytes(f.bytes)
                + (f.ranges.empty() ? tr("  (read by no graph)") : QString()));
        y += kLineHeight;
        const QRect bar(kMargin, y, width, kBarHeight);
        p.fillRect(bar, colors::kPadding);
        const double scale = f.bytes ? double(width) / double(f.bytes) : 0.0;
        for (const FolderMapRange& r : f.ranges) {
            const int x0 = kMargin + int(double(r.offset) * scale);
            const int x1 = kMargin + int(double(r.offset + r.length) * scale);
            const int w = std::max(1, std::min(x1, kMargin + width) - x0);
            const int bands = std::max<int>(1, int(r.readers.size()));
            for (int b = 0; b < bands; ++b) {
                const int top = y + b * kBarHeight / bands;
                const int bottom = y + (b + 1) * kBarHeight / bands;
                const QColor color
                    = r.readers.empty() ? colors::kPadding : graphColor(r.readers[size_t(b)], count);
                p.fillRect(x0, top, w, bottom - top, color);
            }
            if (r.duplicated)
                p.fillRect(x0, y, w, kBarHeight, QBrush(colors::kOverlap, Qt::BDiagPattern));
            if (w > 3) // the seam between two ranges
                p.fillRect(x0, y, 1, kBarHeight, palette().base());
        }
        p.setPen(palette().mid().color());
        p.drawRect(bar.adjusted(0, 0, -1, -1));
        y += kBarHeight + kRowGap / 2;
    }
}

} // namespace ui
