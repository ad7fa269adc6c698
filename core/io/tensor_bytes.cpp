#include "tensor_bytes.h"

#include "byte_source.h"

namespace repack {

TensorBytes TensorBytes::mapped(
    std::span<const std::byte> bytes, std::shared_ptr<const ByteSource> source)
{
    TensorBytes t;
    t.m_view = bytes;
    t.m_source = source.get();
    t.m_keep = std::move(source);
    return t;
}

void TensorBytes::releaseSourcePages(std::span<const std::byte> part) const
{
    m_source->releaseView(part);
}

} // namespace repack
