#include "safetensors.h"

#include "core/dtype.h"
#include "core/posix_file.h"
#include "data_file.h"
#include "tensor_info.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <span>

namespace repack {
namespace {

// Parsed headers need no order (entries are sorted by offset); nlohmann's ordered_json finds
// keys linearly, which made a header of many entries quadratic.
using Json = nlohmann::json;

struct DtypeName {
    int32_t onnx;
    std::string_view name;
};

// The element types both formats have, by the safetensors name (same little-endian bytes).
constexpr DtypeName kDtypes[] = {
    {dtype::Bool, "BOOL"},
    {dtype::Uint8, "U8"},
    {dtype::Int8, "I8"},
    {dtype::Uint16, "U16"},
    {dtype::Int16, "I16"},
    {dtype::Float16, "F16"},
    {dtype::Bfloat16, "BF16"},
    {dtype::Uint32, "U32"},
    {dtype::Int32, "I32"},
    {dtype::Float, "F32"},
    {dtype::Uint64, "U64"},
    {dtype::Int64, "I64"},
    {dtype::Double, "F64"},
    {dtype::Float8E4M3FN, "F8_E4M3"},
    {dtype::Float8E5M2, "F8_E5M2"},
    {dtype::Float8E8M0, "F8_E8M0"},
};

// Bytes per element of a safetensors dtype this reader knows; 0 otherwise (sizes unchecked:
// newer releases of the format add dtypes).
uint64_t elementBytes(std::string_view name)
{
    for (const auto& d : kDtypes)
        if (d.name == name)
            return static_cast<uint64_t>(dtype::bitsPerElement(d.onnx) / 8);
    return 0;
}

// The element count as the reference reader computes it: a checked product, dimension by
// dimension, so [2^62, 2^62, 0] overflows although it holds no element.
std::optional<uint64_t> checkedElements(std::span<const int64_t> shape)
{
    uint64_t n = 1;
    for (int64_t d : shape) {
        const auto u = static_cast<uint64_t>(d);
        if (d < 0 || (u && n > std::numeric_limits<uint64_t>::max() / u))
            return std::nullopt;
        n *= u;
    }
    return n;
}

std::string dump(const Json& json)
{
    return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string shapeText(std::span<const int64_t> shape)
{
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i)
        out.append(i ? ", " : "").append(std::to_string(shape[i]));
    return out + "]";
}

// One entry of a header, checked against the file: the format's keys, dtype x shape the size of
// its range, inside the data.
Result<SafetensorsEntry> readEntry(
    const std::string& name, const Json& value, uint64_t dataStart, uint64_t fileBytes)
{
    const auto where = "entry '" + name + "'";
    if (!value.is_object() || !value.contains("dtype") || !value["dtype"].is_string()
        || !value.contains("shape") || !value["shape"].is_array() || !value.contains("data_offsets")
        || !value["data_offsets"].is_array() || value["data_offsets"].size() != 2)
        return Error::corrupt(where + " needs a dtype, a shape and two data_offsets");
    SafetensorsEntry entry{name, value["dtype"].get<std::string>(), {}, 0, 0};
    std::vector<int64_t> shape;
    for (const auto& dim : value["shape"]) {
        if (!dim.is_number_unsigned()
            || dim.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
            return Error::corrupt(where + " has a shape that is not a list of sizes");
        shape.push_back(dim.get<int64_t>());
    }
    entry.shape = shape;
    const auto& offsets = value["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
        return Error::corrupt(where + " has data_offsets that are not byte offsets");
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end || end > fileBytes - dataStart)
        return Error::corrupt(where + " has data_offsets [" + std::to_string(begin) + ", "
            + std::to_string(end) + "] past the file's " + std::to_string(fileBytes - dataStart)
            + " bytes of data");
    // dtype x shape must be the range's size, for the dtypes both formats share.
    const auto elements = checkedElements(entry.shape);
    if (!elements)
        return Error::corrupt(where + " has a shape whose element count overflows");
    if (const uint64_t size = elementBytes(entry.dtype)) {
        if (*elements > std::numeric_limits<uint64_t>::max() / size)
            return Error::corrupt(where + " has a shape whose byte size overflows");
        const uint64_t bytes = *elements * size;
        if (bytes != end - begin)
            return Error::corrupt(where + ": " + entry.dtype + " " + shapeText(entry.shape)
                + " needs " + std::to_string(bytes) + " bytes, its data_offsets hold "
                + std::to_string(end - begin));
    }
    entry.begin = dataStart + begin;
    entry.end = dataStart + end;
    return entry;
}

Status checkMetadata(const Json& value)
{
    if (!value.is_object())
        return Error::corrupt("__metadata__ is not an object");
    for (const auto& [key, text] : value.items())
        if (!text.is_string())
            return Error::corrupt("__metadata__ value '" + key + "' is not a string");
    return {};
}

// Reads a header entry by entry (nlohmann's SAX interface): only the entry being read is a
// JSON document, so a hostile 100 MB header takes about its own size again in entries, not the
// ten times a document of the whole header took.
class HeaderReader : public nlohmann::json_sax<Json> {
public:
    HeaderReader(uint64_t dataStart, uint64_t fileBytes)
        : m_dataStart(dataStart)
        , m_fileBytes(fileBytes)
    {
    }

    std::vector<SafetensorsEntry> entries;
    std::string error; // why the header is refused; empty while it is fine

    bool null() override { return scalar(nullptr); }
    bool boolean(bool v) override { return scalar(v); }
    bool number_integer(number_integer_t v) override { return scalar(v); }
    bool number_unsigned(number_unsigned_t v) override { return scalar(v); }
    bool number_float(number_float_t v, const string_t&) override { return scalar(v); }
    bool string(string_t& v) override { return scalar(std::move(v)); }
    bool binary(binary_t& v) override { return scalar(Json::binary(std::move(v))); }
    bool start_object(std::size_t) override { return open(Json::object()); }
    bool start_array(std::size_t) override { return open(Json::array()); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override
    {
        if (m_stack.empty()) // the header's own object: the next value is entry `k`
            m_name = std::move(k);
        else
            m_key = std::move(k);
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override
    {
        error = std::string("its header is not JSON: ") + e.what();
        return false;
    }

private:
    // A value inside the entry being read (or the entry itself, a scalar).
    bool scalar(Json v)
    {
        if (!m_started)
            return fail("its header is not a JSON object");
        if (m_stack.empty())
            return finish(std::move(v));
        insert(std::move(v));
        return true;
    }
    bool open(Json container)
    {
        if (!m_started) {
            if (!container.is_object())
                return fail("its header is not a JSON object");
            m_started = true; // the header's own object: not kept
            return true;
        }
        if (m_stack.empty()) {
            m_entry = std::move(container);
            m_stack.push_back(&m_entry);
        } else {
            m_stack.push_back(insert(std::move(container)));
        }
        return true;
    }
    bool close()
    {
        if (m_stack.empty())
            return true; // the end of the header's own object
        m_stack.pop_back();
        return m_stack.empty() ? finish(std::move(m_entry)) : true;
    }
    Json* insert(Json v)
    {
        Json& parent = *m_stack.back();
        if (parent.is_array()) {
            parent.push_back(std::move(v));
            return &parent.back();
        }
        Json& slot = parent[m_key];
        slot = std::move(v);
        return &slot;
    }
    bool finish(Json value)
    {
        if (m_name == "__metadata__") {
            if (m_metadata)
                return fail("entry '__metadata__' appears twice");
            m_metadata = true;
            Status s = checkMetadata(value);
            return s ? true : fail(s.error().message);
        }
        auto entry = readEntry(m_name, value, m_dataStart, m_fileBytes);
        if (!entry)
            return fail(entry.error().message);
        entries.push_back(std::move(*entry));
        return true;
    }
    bool fail(std::string why)
    {
        error = std::move(why);
        return false;
    }

    uint64_t m_dataStart;
    uint64_t m_fileBytes;
    bool m_started = false;
    std::string m_name; // of the entry being read
    std::string m_key; // the key of the next value inside it
    Json m_entry;
    std::vector<Json*> m_stack; // the containers open inside the entry
    bool m_metadata = false;
};

// The header's entries, or why they are not valid safetensors.
// `text` is freed once read.
Result<std::vector<SafetensorsEntry>> parseEntries(
    std::string text, uint64_t dataStart, uint64_t fileBytes)
{
    HeaderReader reader(dataStart, fileBytes);
    const bool parsed = Json::sax_parse(text, &reader);
    std::string().swap(text);
    if (!parsed || !reader.error.empty())
        return Error::corrupt(reader.error.empty() ? "its header is not JSON" : reader.error);
    std::vector<SafetensorsEntry> entries = std::move(reader.entries);
    // Names are unique (a JSON object's keys; a document would keep only the last).
    {
        std::vector<const std::string*> names;
        names.reserve(entries.size());
        for (const auto& e : entries)
            names.push_back(&e.name);
        std::sort(names.begin(), names.end(), [](auto* a, auto* b) { return *a < *b; });
        for (size_t i = 1; i < names.size(); ++i)
            if (*names[i] == *names[i - 1])
                return Error::corrupt("entry '" + *names[i] + "' appears twice");
    }
    // The format has no holes: tensors cover the data back to back, to the end of the file.
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    uint64_t covered = dataStart;
    for (const auto& e : entries) {
        if (e.begin != covered)
            return Error::corrupt("entry '" + e.name + "' starts at data offset "
                + std::to_string(e.begin - dataStart) + ", not where the previous tensor ends ("
                + std::to_string(covered - dataStart) + ")");
        covered = e.end;
    }
    if (covered != fileBytes)
        return Error::corrupt("its tensors end at byte " + std::to_string(covered) + " of "
            + std::to_string(fileBytes));
    return entries;
}

} // namespace

std::string_view safetensorsDtype(int32_t onnxType)
{
    for (const auto& d : kDtypes)
        if (d.onnx == onnxType)
            return d.name;
    return {};
}

std::string safetensorsName(const TensorInfo& tensor)
{
    constexpr std::string_view kMain = "graph";
    std::string_view scope = tensor.scope;
    if (scope.starts_with("graph/"))
        scope.remove_prefix(kMain.size() + 1);
    const std::string name
        = scope == kMain ? tensor.name : std::string(scope).append("/").append(tensor.name);
    // Valid UTF-8, as the JSON header will spell it (invalid bytes become U+FFFD), so that
    // names are made unique in their final form.
    return Json::parse(dump(Json(name))).get<std::string>();
}

bool safetensorsShapeFits(std::string_view dtype, std::span<const int64_t> shape)
{
    const auto elements = checkedElements(shape);
    const uint64_t size = std::max<uint64_t>(elementBytes(dtype), 1);
    return elements && *elements <= std::numeric_limits<uint64_t>::max() / size;
}

Result<std::optional<SafetensorsHeader>> readSafetensorsHeader(
    int fd, uint64_t fileBytes, const std::filesystem::path& path, uint64_t firstReference)
{
    std::array<std::byte, 9> start{};
    if (fileBytes < start.size())
        return std::optional<SafetensorsHeader>();
    if (Status s = preadExact(fd, start, 0, path); !s)
        return s.error();
    uint64_t length = 0;
    for (int i = 7; i >= 0; --i)
        length = (length << 8) | static_cast<uint8_t>(start[static_cast<size_t>(i)]);
    if (length < 2 || length > fileBytes - 8 || static_cast<char>(start[8]) != '{'
        || 8 + length > firstReference) // a tensor lies in it: plain ONNX data
        return std::optional<SafetensorsHeader>();
    if (length > kSafetensorsMaxHeader)
        return Error::corrupt(path.string() + ": a safetensors header of " + std::to_string(length)
            + " bytes is past the format's limit of " + std::to_string(kSafetensorsMaxHeader));
    std::string text(length, '\0');
    if (Status s
        = preadExact(fd, std::as_writable_bytes(std::span(text.data(), text.size())), 8, path);
        !s)
        return s.error();
    auto entries = parseEntries(std::move(text), 8 + length, fileBytes);
    if (!entries)
        return Error::corrupt(
            path.string() + ": starts like a safetensors file, but " + entries.error().message);
    return std::optional<SafetensorsHeader>(SafetensorsHeader{8 + length, std::move(*entries)});
}

std::string makeSafetensorsHeader(const std::vector<SafetensorsEntry>& entries)
{
    // Entry by entry (names are unique): one JSON object, in the order of the entries.
    std::string text = "{";
    for (const auto& e : entries) {
        text.append(text.size() > 1 ? "," : "").append(dump(Json(e.name))).append(":");
        text.append(dump(nlohmann::ordered_json{{"dtype", e.dtype}, {"shape", e.shape.toVector()},
            {"data_offsets", nlohmann::ordered_json::array({e.begin, e.end})}}));
    }
    text += '}';
    text.append((8 - text.size() % 8) % 8, ' '); // 8 + length: a multiple of 8
    std::string out(8, '\0');
    for (size_t i = 0; i < 8; ++i)
        out[i] = static_cast<char>((uint64_t(text.size()) >> (8 * i)) & 0xff);
    return out + text;
}

uint64_t safetensorsEntryBound(
    std::string_view name, std::string_view dtype, std::span<const int64_t> shape)
{
    // Each name byte escapes to at most 6 ("\u001f"); each number to at most 20 digits and a
    // comma; the keys, quotes and brackets of one entry take 48.
    return 6 * name.size() + dtype.size() + 21 * (shape.size() + 2) + 48;
}

void checkSafetensorsFiles(const std::vector<TensorInfo>& tensors, std::vector<Problem>& problems)
{
    // Per data file (by path, so problems come in a stable order): the tensors that read it,
    // only those whose reference validated.
    std::map<std::filesystem::path, std::pair<DataFile*, std::vector<const TensorInfo*>>> files;
    for (const auto& t : tensors)
        if (t.isExternal() && t.external->file()) {
            auto& [file, readers] = files[t.external->file()->path()];
            file = t.external->file().get();
            readers.push_back(&t);
        }
    for (auto& [path, entry] : files) {
        auto& [file, readers] = entry;
        file->setSafetensors(nullptr); // a file reused from an earlier index is read again
        if (!file->isLocal())
            continue; // an address, not a path: a remote file's header is not read
        auto fd = UniqueFd::openRead(path);
        if (!fd)
            continue; // reading any tensor reports it
        auto identity = identityOf(fd->get());
        if (!identity || !(*identity == file->identity()))
            continue;
        // A file whose tensors lie in what would be the header is plain ONNX data.
        const uint64_t firstByte = (*std::min_element(readers.begin(), readers.end(),
                                        [](const TensorInfo* a, const TensorInfo* b) {
                                            return a->external->offset < b->external->offset;
                                        }))
                                       ->external->offset;
        // A header too large to hold is a warning: the model still opens without it. (A named
        // reference, not the structured binding: clang 14 cannot capture those.)
        const std::filesystem::path& filePath = path;
        auto header = guardMemory(filePath.string() + ": reading its safetensors header",
            [&] { return readSafetensorsHeader(fd->get(), identity->size, filePath, firstByte); });
        if (!header) {
            problems.push_back({Severity::Warning, {}, std::string(code::SafetensorsHeader),
                header.error().message});
            continue;
        }
        if (!*header)
            continue;
        // Several entries may share a range (zero-length tensors): any with the tensor's dtype
        // and shape matches.
        std::multimap<std::pair<uint64_t, uint64_t>, const SafetensorsEntry*> byRange;
        for (const auto& e : (*header)->entries)
            byRange.emplace(std::pair(e.begin, e.end), &e);
        const uint64_t dataStart = (*header)->dataStart;
        for (const TensorInfo* t : readers) {
            const uint64_t begin = t->external->offset;
            const uint64_t end = begin + t->external->length.value_or(t->byteSize());
            const auto [first, last] = byRange.equal_range({begin, end});
            const std::string_view dtype = safetensorsDtype(t->dataType);
            const bool agrees = std::any_of(first, last, [&](const auto& candidate) {
                return candidate.second->dtype == dtype && candidate.second->shape == t->shape;
            });
            if (agrees)
                continue;
            std::string why;
            if (first == last)
                why = "no entry of the header holds exactly its bytes "
                    + std::to_string(begin - dataStart) + " to " + std::to_string(end - dataStart)
                    + " (data offsets)";
            else if (first->second->dtype != dtype)
                why = "the header's entry '" + first->second->name + "' says "
                    + first->second->dtype + ", the model says "
                    + std::string(dtype::name(t->dataType).value_or("an unknown type"));
            else
                why = "the header's entry '" + first->second->name + "' has shape "
                    + shapeText(first->second->shape) + ", the model " + shapeText(t->shape);
            problems.push_back({Severity::Error, t->qualifiedName(),
                std::string(code::SafetensorsMismatch),
                t->qualifiedName() + ": " + path.string() + " is a safetensors file, but " + why});
        }
        file->setSafetensors(std::make_shared<const SafetensorsHeader>(std::move(**header)));
    }
}

} // namespace repack
