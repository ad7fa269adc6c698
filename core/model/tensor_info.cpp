#include "tensor_info.h"

#include <algorithm>
#include <limits>

namespace repack {

// The index of a model of many external tensors holds one of each per tensor: an
// entry that grows is a decision, not an accident.
static_assert(sizeof(SharedString) == 8, "TensorInfo::scope is held once per tensor");
static_assert(sizeof(ExternalRef) <= 32, "ExternalRef is held once per tensor, in its entry");
static_assert(sizeof(TensorInfo) <= 144, "TensorInfo is held once per tensor");

const Shared<DataLocation>& ExternalRef::noLocation()
{
    static const Shared<DataLocation> none = Shared<DataLocation>::make({});
    return none;
}

const DataLocation& ExternalRef::where() const
{
    return m_where ? *m_where : *noLocation();
}

void ExternalRef::dropFile()
{
    if (m_where && m_where->file)
        m_where = Shared<DataLocation>::make({m_where->location, m_where->resolvedPath, nullptr});
}

std::optional<uint64_t> elementCount(std::span<const int64_t> dims)
{
    if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; }))
        return std::nullopt;
    // A zero dimension anywhere makes the tensor empty, however large the others are.
    if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d == 0; }))
        return 0;
    uint64_t n = 1;
    for (int64_t d : dims) {
        const auto u = static_cast<uint64_t>(d);
        if (u != 0 && n > std::numeric_limits<uint64_t>::max() / u)
            return std::nullopt;
        n *= u;
    }
    return n;
}

std::string_view kindName(TensorKind kind)
{
    switch (kind) {
    case TensorKind::Initializer:
        return "initializer";
    case TensorKind::Attribute:
        return "attribute";
    case TensorKind::Sparse:
        return "sparse";
    }
    return "initializer";
}

std::string_view storageName(Storage storage)
{
    switch (storage) {
    case Storage::Raw:
        return "raw";
    case Storage::Typed:
        return "typed";
    case Storage::External:
        return "external";
    }
    return "raw";
}

} // namespace repack
