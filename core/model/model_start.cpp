#include "model_start.h"

#include "wire_reader.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace repack {

namespace {

using MP = onnx::ModelProto;

struct ModelField {
    uint32_t number;
    int type;
    const char* name;
};

// Every field of a ModelProto (onnx.proto), with its wire type.
constexpr ModelField kModelFields[] = {
    {MP::kIrVersionFieldNumber, wire::Varint, "ir_version"},
    {MP::kProducerNameFieldNumber, wire::Len, "producer_name"},
    {MP::kProducerVersionFieldNumber, wire::Len, "producer_version"},
    {MP::kDomainFieldNumber, wire::Len, "domain"},
    {MP::kModelVersionFieldNumber, wire::Varint, "model_version"},
    {MP::kDocStringFieldNumber, wire::Len, "doc_string"},
    {MP::kGraphFieldNumber, wire::Len, "graph"},
    {MP::kOpsetImportFieldNumber, wire::Len, "opset_import"},
    {MP::kMetadataPropsFieldNumber, wire::Len, "metadata_props"},
    {MP::kTrainingInfoFieldNumber, wire::Len, "training_info"},
    {MP::kFunctionsFieldNumber, wire::Len, "functions"},
};

const ModelField* modelField(uint32_t number, int type)
{
    for (const ModelField& field : kModelFields)
        if (field.number == number && field.type == type)
            return &field;
    return nullptr;
}

// A safetensors file: a little-endian 64-bit length, then that many bytes of JSON header.
bool isSafetensors(const unsigned char* b, size_t n, uint64_t fileSize)
{
    if (n < 9 || b[8] != '{')
        return false;
    uint64_t header = 0;
    for (int i = 7; i >= 0; --i)
        header = header << 8 | b[i];
    return header >= 2 && header <= fileSize - 8;
}

// The format the first bytes are the signature of, or null.
const char* signature(const unsigned char* b, size_t n, uint64_t fileSize)
{
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return "gzip";
    if (n >= 4 && std::memcmp(b, "PK\x03\x04", 4) == 0)
        return "a zip archive";
    if (isSafetensors(b, n, fileSize))
        return "safetensors";
    return nullptr;
}

// What the file begins with, as a reader would recognise it: its text when it is text (a web
// page, an error message), else its first bytes in hex and the format they are the signature
// of.
std::string beginning(const unsigned char* b, size_t n, uint64_t fileSize)
{
    constexpr size_t kText = 40;
    constexpr size_t kHex = 8;
    const size_t text = std::min(n, kText);
    const bool isText = text > 0 && std::all_of(b, b + text, [](unsigned char c) {
        return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\r' || c == '\t';
    });
    std::string out = "it begins ";
    if (isText) {
        out += '"';
        for (size_t i = 0; i < text; ++i) {
            const char c = static_cast<char>(b[i]);
            out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : std::string(1, c);
        }
        return out + (fileSize > text ? "...\"" : "\"");
    }
    char hex[4];
    for (size_t i = 0; i < std::min(n, kHex); ++i) {
        std::snprintf(hex, sizeof hex, i == 0 ? "%02x" : " %02x", b[i]);
        out += hex;
    }
    if (const char* format = signature(b, n, fileSize))
        out.append(" (").append(format).append(")");
    return out;
}

// Why `b` cannot begin a ModelProto of `fileSize` bytes, or "" when it can.
std::string whyNotAModel(const unsigned char* b, size_t n, uint64_t fileSize)
{
    if (isSafetensors(b, n, fileSize))
        return "a safetensors header at byte 0";
    wire::Reader reader(b, 0, n);
    uint64_t pos = 0;
    uint32_t number = 0;
    int type = 0;
    if (!reader.tag(pos, number, type))
        return reader.error();
    if (type > wire::Fixed32)
        return "invalid wire type " + std::to_string(type) + " at byte 0";
    const ModelField* field = modelField(number, type);
    if (!field)
        return "the tag at byte 0 is field " + std::to_string(number) + " of wire type "
            + std::to_string(type) + ": no field of a ModelProto";
    const uint64_t valueAt = pos;
    uint64_t value = 0;
    if (!reader.varint(pos, n, value))
        return reader.error();
    if (type == wire::Len && value > fileSize - pos)
        return std::string("its first field, ") + field->name + ", claims " + std::to_string(value)
            + " bytes at byte " + std::to_string(valueAt) + ", past the end of the file at byte "
            + std::to_string(fileSize);
    return {};
}

} // namespace

Error notAnOnnxModel(const std::string& name, const std::string& found)
{
    return Error::format(name + ": not an ONNX model (" + found + ")");
}

Status checkModelStart(std::span<const std::byte> head, uint64_t fileSize, const std::string& name)
{
    const auto* b = reinterpret_cast<const unsigned char*>(head.data());
    const size_t n = static_cast<size_t>(std::min<uint64_t>(head.size(), fileSize));
    if (const std::string why = whyNotAModel(b, n, fileSize); !why.empty())
        return notAnOnnxModel(name, why + "; " + beginning(b, n, fileSize));
    return {};
}

} // namespace repack
