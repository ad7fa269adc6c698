#include "byte_source.h"

#include "tensor_bytes.h"

namespace repack {

Status ByteSource::readInto(uint64_t offset, std::span<std::byte> into, const CancelToken* cancel)
{
    auto bytes = read(offset, into.size(), cancel);
    if (!bytes)
        return bytes.error();
    return bytes->copyTo(into, displayName());
}

} // namespace repack
