#include "tensor_info.h"

namespace repack {

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
