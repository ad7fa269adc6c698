#include "tensor_fields.h"

#include "core/dtype.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <limits>

namespace repack {
namespace {

using wire::Field;
using wire::Reader;
using TP = onnx::TensorProto;

bool countVarints(Reader& r, const Field& f, uint64_t& count)
{
    uint64_t pos = f.begin;
    uint64_t ignored = 0;
    while (pos < f.end) {
        if (!r.varint(pos, f.end, ignored))
            return false;
        ++count;
    }
    return true;
}

// A repeated number field: `scalar` is its unpacked wire type, `width` its packed width
// (0 for varints).
bool typedValues(Reader& r, const Field& f, int scalar, uint64_t width, TensorFields& t)
{
    if (f.type == scalar) {
        ++t.typedCount;
        return true;
    }
    if (f.type != wire::Len)
        return true; // an unknown field to protobuf
    if (width == 0)
        return countVarints(r, f, t.typedCount);
    if ((f.end - f.begin) % width != 0)
        return r.fail("packed field of " + std::to_string(f.end - f.begin)
                + " bytes, not a multiple of " + std::to_string(width),
            f.tagAt);
    t.typedCount += (f.end - f.begin) / width;
    return true;
}

bool externalEntry(Reader& parent, const Field& field, TensorFields& t)
{
    Reader r(parent.data(), 0, 0);
    if (!parent.nested(field, r))
        return false;
    std::string_view key;
    std::string_view value;
    Field f;
    while (r.next(f)) {
        if (f.type != wire::Len)
            continue;
        if (f.number == onnx::StringStringEntryProto::kKeyFieldNumber)
            key = r.text(f);
        else if (f.number == onnx::StringStringEntryProto::kValueFieldNumber)
            value = r.text(f);
    }
    t.externalData.emplace_back(key, value);
    return parent.adopt(r);
}

bool tensorFieldInto(Reader& r, const Field& f, TensorFields& t)
{
    switch (f.number) {
    case TP::kDimsFieldNumber:
        if (f.type == wire::Varint) {
            t.dims.push_back(static_cast<int64_t>(f.varint));
        } else if (f.type == wire::Len) {
            uint64_t pos = f.begin;
            uint64_t v = 0;
            while (pos < f.end) {
                if (!r.varint(pos, f.end, v))
                    return false;
                t.dims.push_back(static_cast<int64_t>(v));
            }
        }
        return true;
    case TP::kDataTypeFieldNumber:
        if (f.type == wire::Varint)
            t.dataType = static_cast<int32_t>(f.varint);
        return true;
    case TP::kDataLocationFieldNumber:
        // protobuf reads an enum as an int32 (the varint's low 32 bits); a value it does not
        // know goes to the unknown fields.
        if (f.type == wire::Varint) {
            const auto value = static_cast<int32_t>(f.varint);
            if (TP::DataLocation_IsValid(value))
                t.external = value == TP::EXTERNAL;
        }
        return true;
    case TP::kNameFieldNumber:
        if (f.type == wire::Len)
            t.name = r.text(f);
        return true;
    case TP::kRawDataFieldNumber:
        if (f.type == wire::Len) {
            t.hasRaw = true;
            t.raw = {f.begin, f.end - f.begin};
        }
        return true;
    case TP::kStringDataFieldNumber:
        if (f.type == wire::Len) {
            ++t.typedCount;
            t.stringBytes += f.end - f.begin;
        }
        return true;
    case TP::kFloatDataFieldNumber:
        return typedValues(r, f, wire::Fixed32, 4, t);
    case TP::kDoubleDataFieldNumber:
        return typedValues(r, f, wire::Fixed64, 8, t);
    case TP::kInt32DataFieldNumber:
    case TP::kInt64DataFieldNumber:
    case TP::kUint64DataFieldNumber:
        return typedValues(r, f, wire::Varint, 0, t);
    case TP::kExternalDataFieldNumber:
        return f.type != wire::Len || externalEntry(r, f, t);
    }
    return true;
}

} // namespace

bool readTensorField(Reader& r, const Field& f, TensorFields& t)
{
    return tensorFieldInto(r, f, t);
}

void addProblem(std::vector<Problem>& problems, const TensorInfo& info, std::string_view code,
    std::string message, Severity severity)
{
    problems.push_back({severity, info.qualifiedName(), std::string(code),
        info.qualifiedName() + ": " + std::move(message)});
}

TensorInfo describeTensor(const TensorFields& t, std::string name, SharedString scope,
    TensorKind kind, std::vector<Problem>& problems)
{
    TensorInfo info;
    info.name = std::move(name);
    info.scope = std::move(scope);
    info.kind = kind;
    info.dataType = t.dataType;
    info.shape = t.dims;
    const Count elements = info.elements();

    const bool known = dtype::name(info.dataType).has_value() && info.dataType != 0;
    if (!known)
        addProblem(problems, info, code::UnknownDtype,
            "unknown data type " + std::to_string(info.dataType), Severity::Warning);
    if (!elements) {
        const bool negative
            = std::any_of(t.dims.begin(), t.dims.end(), [](int64_t d) { return d < 0; });
        addProblem(problems, info, negative ? code::BadDims : code::SizeOverflow,
            negative ? "negative dimension in shape"
                     : "element count of the shape overflows 64 bits");
    } else if (info.dataType == dtype::String) {
        info.bytes = t.stringBytes;
    } else if (known) {
        info.bytes = dtype::byteSize(info.dataType, *elements);
        if (!info.bytes)
            addProblem(
                problems, info, code::SizeOverflow, "byte size of the tensor overflows 64 bits");
    }
    return info;
}

void checkInlineSize(
    const TensorInfo& info, uint64_t rawHeld, uint64_t typedCount, std::vector<Problem>& problems)
{
    if (!info.bytes || info.dataType == dtype::String)
        return;
    if (info.storage == Storage::Raw) {
        if (rawHeld != *info.bytes)
            addProblem(problems, info, code::InlineSizeMismatch,
                "raw_data holds " + std::to_string(rawHeld) + " bytes, dtype x shape needs "
                    + std::to_string(*info.bytes));
        return;
    }
    const uint64_t count = typedCount;
    const Count elements = info.elements();
    if (count == 0 && *elements == 0)
        return;
    const int bits = dtype::bitsPerElement(info.dataType);
    uint64_t expected = *elements;
    if (info.dataType == dtype::Complex64 || info.dataType == dtype::Complex128)
        expected *= 2;
    else if (bits < 8)
        expected = *info.bytes;
    if (count != expected)
        addProblem(problems, info, code::InlineSizeMismatch,
            "typed data holds " + std::to_string(count) + " values, dtype x shape needs "
                + std::to_string(expected));
}

} // namespace repack
