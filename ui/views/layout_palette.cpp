#include "layout_palette.h"

namespace ui::colors {

QColor regionColor(repack::RegionType type, int tensor)
{
    switch (type) {
    case repack::RegionType::Tensor:
        return tensor % 2 ? kTensorAlternate : kTensor;
    case repack::RegionType::Padding:
        return kPadding;
    case repack::RegionType::Orphaned:
        return kOrphaned;
    case repack::RegionType::Overlap:
        return kOverlap;
    case repack::RegionType::Header:
        return kHeader;
    }
    return kPadding;
}

QColor gapColor(const DiffGap& gap)
{
    if (gap.header)
        return regionColor(repack::RegionType::Header);
    return regionColor(gap.orphaned ? repack::RegionType::Orphaned : repack::RegionType::Padding);
}

QColor changeColor(ChangeKind kind)
{
    switch (kind) {
    case ChangeKind::Unchanged:
        return {0x9a, 0xa7, 0xb5};
    case ChangeKind::Moved:
        return kTensor;
    case ChangeKind::ToInline:
        return {0x8e, 0x44, 0xad};
    case ChangeKind::ToExternal:
        return {0x16, 0xa0, 0x85};
    case ChangeKind::NewFile:
        return {0x00, 0xac, 0xc1};
    case ChangeKind::Added:
        return {0x43, 0xa0, 0x47};
    case ChangeKind::Removed:
        return {0xe5, 0x39, 0x35};
    case ChangeKind::ContentChanged:
        return {0xd8, 0x1b, 0x60};
    }
    return Qt::gray;
}

} // namespace ui::colors
