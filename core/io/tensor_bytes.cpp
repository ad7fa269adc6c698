#include "tensor_bytes.h"

#include "byte_source.h"

#include "core/mapped_memory.h"

#include <cstring>

namespace repack {

Status TensorBytes::copyTo(std::span<std::byte> into, const std::string& what) const
{
    const auto from = bytes();
    if (from.size() != into.size())
        return Error::internal(what + ": a read gave " + std::to_string(from.size())
            + " bytes where " + std::to_string(into.size()) + " were asked");
    return readMapped(what, [&] { std::memcpy(into.data(), from.data(), into.size()); });
}

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
