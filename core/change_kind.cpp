#include "change_kind.h"

namespace repack {

std::string_view changeKey(ChangeKind kind)
{
    switch (kind) {
    case ChangeKind::Added:
        return "added";
    case ChangeKind::Removed:
        return "removed";
    case ChangeKind::Moved:
    case ChangeKind::NewFile:
        return "moved";
    case ChangeKind::ToInline:
    case ChangeKind::ToExternal:
        return "storage_changed";
    case ChangeKind::ContentChanged:
        return "content_changed";
    case ChangeKind::Unchanged:
        break;
    }
    return "unchanged";
}

} // namespace repack
